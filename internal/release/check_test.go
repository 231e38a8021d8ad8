package release

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/patch"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// answeringChecker is a Checker with set answers, recording what was dry-run.
type answeringChecker struct {
	stored    map[string][]string
	served    bool
	namespace map[string]string // nil: the namespace does not exist
	// terminating: the namespace is being deleted.
	terminating bool
	dryRun      []string
	// unserved answers every dry run that the kind is not served.
	unserved bool
}

func (c *answeringChecker) ServerSchemas(context.Context, []schema.GroupVersion) (map[schema.GroupVersion]*validate.ServerSchema, []error) {
	return nil, []error{errors.New("no documents")}
}

func (c *answeringChecker) StoredVersions(_ context.Context, name string) ([]string, bool, error) {
	v, ok := c.stored[name]
	return v, ok, nil
}

func (c *answeringChecker) Serves(string, string) (bool, error) { return c.served, nil }

func (c *answeringChecker) Namespace(context.Context, string) (helmrelease.Namespace, error) {
	return helmrelease.Namespace{Exists: c.namespace != nil, Terminating: c.terminating, Labels: c.namespace}, nil
}

func (c *answeringChecker) DryRun(_ context.Context, objs []manifest.Object) ([]helmrelease.DryRunAnswer, error) {
	answers := make([]helmrelease.DryRunAnswer, len(objs))
	for i, o := range objs {
		c.dryRun = append(c.dryRun, manifest.Key(o, ""))
		if c.unserved {
			answers[i] = helmrelease.DryRunAnswer{Err: errors.New("not served"), Unserved: true}
		}
	}
	return answers, nil
}

// checked renders in and checks the rendering over recorded with c.
func checked(t *testing.T, in Inputs, recorded *Recorded, level CheckLevel, c Checker) *Checked {
	t.Helper()
	req := Prepare(context.Background(), nil, in, nil)
	p, err := req.Plan(context.Background(), recorded, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c == nil {
		return req.Check(context.Background(), p, recorded, level, nil, errors.New("no route to the cluster"))
	}
	return req.Check(context.Background(), p, recorded, level, c, nil)
}

// The plan's checks dry-run only the objects that change, in a namespace that exists, and
// kinds the cluster serves; they say why nothing was dry-run without a cluster, and ask
// nothing of it offline.
func TestRequest_checkDryRunsWhatChanges(t *testing.T) {
	first := planned(t, Prepare(context.Background(), nil, webInputs(nil), nil), nil).Rendering
	recorded := deployedAs(first.Manifests, 1)

	c := &answeringChecker{namespace: map[string]string{PodSecurityEnforceLabel: "baseline"}}
	got := checked(t, webInputs(map[string]string{"config.greeting": "hi"}), recorded, CheckAll, c)
	if got.DryRun == nil || got.DryRun.Enforce != "baseline" || len(got.SchemaErrors) != 1 {
		t.Fatalf("checked = %+v, want a dry run under the namespace's level, and why the schemas were not used", got)
	}
	if !slices.Equal(c.dryRun, []string{"ConfigMap/" + testNamespace + "/web"}) {
		t.Errorf("dry-run %q, want the changed ConfigMap alone", c.dryRun)
	}

	// The level the environment's plan sets is the one checked, and the namespace's own is
	// named as replaced; a plan that sets the level the namespace has replaces nothing.
	for _, tt := range []struct {
		planned           *PlannedLevel
		enforce, replaced string
	}{
		{&PlannedLevel{Enforce: "privileged"}, "privileged", "baseline"},
		{&PlannedLevel{}, "", "baseline"},
		{&PlannedLevel{Enforce: "baseline"}, "baseline", ""},
		{nil, "baseline", ""},
	} {
		in := webInputs(map[string]string{"config.greeting": "hi"})
		in.PodSecurity = tt.planned
		c = &answeringChecker{namespace: map[string]string{PodSecurityEnforceLabel: "baseline"}}
		got = checked(t, in, recorded, CheckAll, c)
		// The level is the plan's, not yet the namespace's, wherever the plan replaces one.
		if got.DryRun == nil || got.DryRun.Enforce != tt.enforce || got.DryRun.Replaced != tt.replaced || got.DryRun.Planned != (tt.replaced != "") || len(c.dryRun) != 1 {
			t.Errorf("planned %+v: checked %+v, dry-run %q; want the level %q checked, %q replaced", tt.planned, got.DryRun, c.dryRun, tt.enforce, tt.replaced)
		}
	}

	// The pods of a changed workload are evaluated against the level the environment's plan
	// sets, which the dry run cannot check: in a namespace of another level, in one the apply
	// creates. Where the namespace has that level, and for an unchanged workload, the dry run
	// alone speaks.
	// A workload unchanged but for a null is applied again as it is, and makes no new pods.
	deploymentKey := "Deployment.apps/web"
	withNull := patch.Patch{Target: patch.Target{Kind: "Deployment", Name: "web"},
		Patch: `[{"op": "add", "path": "/spec/template/spec/schedulerName", "value": null}]`}
	for _, tt := range []struct {
		name      string
		planned   *PlannedLevel
		namespace map[string]string // nil: the namespace does not exist
		set       map[string]string
		patches   []patch.Patch // in the recorded revision too
		refused   string        // the policy version refused at, empty when nothing is
	}{
		{"stricter than the namespace's", &PlannedLevel{Enforce: "restricted"}, map[string]string{PodSecurityEnforceLabel: "baseline"}, map[string]string{"image.tag": "2"}, nil, "latest"},
		{"set on a namespace the apply creates", &PlannedLevel{Enforce: "restricted"}, nil, map[string]string{"image.tag": "2"}, nil, "latest"},
		{"at the version the plan pins", &PlannedLevel{Enforce: "restricted", Version: "v1.30"}, map[string]string{PodSecurityEnforceLabel: "restricted"}, map[string]string{"image.tag": "2"}, nil, "v1.30"},
		{"the namespace's own", &PlannedLevel{Enforce: "restricted"}, map[string]string{PodSecurityEnforceLabel: "restricted"}, map[string]string{"image.tag": "2"}, nil, ""},
		{"the namespace's own, pinned", &PlannedLevel{Enforce: "restricted", Version: "v1.30"}, map[string]string{PodSecurityEnforceLabel: "restricted", PodSecurityVersionLabel: "v1.30"}, map[string]string{"image.tag": "2"}, nil, ""},
		{"one the pods meet", &PlannedLevel{Enforce: "baseline"}, map[string]string{}, map[string]string{"image.tag": "2"}, nil, ""},
		{"the workload unchanged", &PlannedLevel{Enforce: "restricted"}, map[string]string{}, map[string]string{"config.greeting": "hi"}, nil, ""},
		{"the workload unchanged, holding a null", &PlannedLevel{Enforce: "restricted"}, map[string]string{}, map[string]string{"config.greeting": "hi"}, []patch.Patch{withNull}, ""},
		{"a changed workload holding a null", &PlannedLevel{Enforce: "restricted"}, map[string]string{}, map[string]string{"image.tag": "2"}, []patch.Patch{withNull}, "latest"},
		{"none planned", nil, map[string]string{}, map[string]string{"image.tag": "2"}, nil, ""},
	} {
		before := recorded
		if tt.patches != nil {
			in := webInputs(nil)
			in.Patches = tt.patches
			before = deployedAs(planned(t, Prepare(context.Background(), nil, in, nil), nil).Rendering.Manifests, 1)
		}
		in := webInputs(tt.set)
		in.PodSecurity, in.Patches = tt.planned, tt.patches
		c = &answeringChecker{namespace: tt.namespace}
		got = checked(t, in, before, CheckAll, c)
		if got.DryRun == nil {
			t.Fatalf("%s: no dry run", tt.name)
		}
		if tt.patches != nil && !slices.ContainsFunc(got.DryRun.Outcomes, func(o DryRunOutcome) bool {
			return o.Key == deploymentKey && slices.Contains(o.Nulls, ".spec.template.spec.schedulerName")
		}) {
			t.Errorf("%s: outcomes %+v, want the Deployment dry-run with its null", tt.name, got.DryRun.Outcomes)
		}
		refused := got.DryRun.PodSecurity
		switch {
		case tt.refused == "" && len(refused) > 0:
			t.Errorf("%s: refused %+v, want nothing refused", tt.name, refused)
		case tt.refused != "" && (len(refused) != 1 || refused[0].Key != deploymentKey || refused[0].Level != "restricted" || refused[0].Version != tt.refused ||
			!refused[0].Planned || refused[0].Source != "web/templates/deployment.yaml" || !strings.Contains(refused[0].Forbidden, "runAsNonRoot != true")):
			t.Errorf("%s: refused %+v, want the Deployment's pods refused by the restricted level at %s", tt.name, refused, tt.refused)
		}
	}

	c = &answeringChecker{}
	got = checked(t, webInputs(nil), nil, CheckAll, c)
	if got.DryRun == nil || !got.DryRun.NamespaceMissing || len(c.dryRun) != 0 {
		t.Errorf("into a namespace not created yet: checked %+v, dry-run %q; want no namespaced object dry-run", got.DryRun, c.dryRun)
	}

	// A namespace being deleted takes no new object: its objects are not dry-run, and its
	// labels, about to go with it, are not read as its Pod Security level.
	c = &answeringChecker{namespace: map[string]string{PodSecurityEnforceLabel: "baseline"}, terminating: true}
	got = checked(t, webInputs(map[string]string{"config.greeting": "hi"}), recorded, CheckAll, c)
	if got.DryRun == nil || !got.DryRun.NamespaceTerminating || got.DryRun.NamespaceMissing || got.DryRun.Enforce != "" || len(c.dryRun) != 0 {
		t.Errorf("into a namespace being deleted: checked %+v, dry-run %q; want it said, and no namespaced object dry-run", got.DryRun, c.dryRun)
	}

	got = checked(t, webInputs(nil), nil, CheckAll, nil)
	if got.DryRun == nil || got.DryRun.Skipped == nil || got.DryRun.Skipped.Error() != "no route to the cluster" {
		t.Errorf("without a cluster: %+v, want the dry run skipped, saying why", got.DryRun)
	}

	c = &answeringChecker{namespace: map[string]string{}}
	if got = checked(t, webInputs(nil), nil, CheckOffline, c); got.DryRun != nil || len(c.dryRun) != 0 || got.ClusterSchemas {
		t.Errorf("offline: %+v, dry-run %q; want nothing asked of the cluster", got, c.dryRun)
	}
	if got = checked(t, webInputs(nil), nil, CheckNone, c); len(got.Findings) != 0 || got.DryRun != nil {
		t.Errorf("none: %+v, want nothing checked", got)
	}
}

// Under create_replace, a chart definition that drops a version the cluster stores is found,
// and no dry run follows; a kind the chart defines that the cluster does not serve yet is
// checked offline, not dry-run.
func TestRequest_checkDefinitions(t *testing.T) {
	in := withCRDsInputs()
	in.Definitions = nil
	c := &answeringChecker{stored: map[string][]string{"widgets.test.gitlabk8s.io": {"v1alpha1", "v1"}}, namespace: map[string]string{}}
	got := checked(t, in, nil, CheckAll, c)
	want := []DroppedVersions{{Key: definitionKeyPrefix + "widgets.test.gitlabk8s.io", Name: "widgets.test.gitlabk8s.io", Versions: []string{"v1alpha1"}}}
	if len(got.Dropped) != 1 || got.Dropped[0].Key != want[0].Key || !slices.Equal(got.Dropped[0].Versions, want[0].Versions) || got.DryRun != nil {
		t.Errorf("checked = dropped %+v, dry run %+v; want %+v and no dry run", got.Dropped, got.DryRun, want)
	}

	c = &answeringChecker{stored: map[string][]string{}, namespace: map[string]string{}}
	got = checked(t, in, nil, CheckAll, c)
	if got.DryRun == nil || !slices.Equal(got.DryRun.NotServed, []string{"Widget.test.gitlabk8s.io/widgets"}) || len(c.dryRun) != 0 {
		t.Errorf("checked = %+v, dry-run %q; want the Widget checked offline", got.DryRun, c.dryRun)
	}
	c.served = true
	got = checked(t, in, nil, CheckAll, c)
	if !slices.Equal(c.dryRun, []string{"Widget.test.gitlabk8s.io/" + testNamespace + "/widgets"}) || len(got.DryRun.Outcomes) != 1 {
		t.Errorf("a served kind: dry-run %q, outcomes %+v; want the Widget's", c.dryRun, got.DryRun.Outcomes)
	}
	// Discovery said served, the dry run says not: the Widget is checked offline all the same.
	c.unserved = true
	got = checked(t, in, nil, CheckAll, c)
	if len(got.DryRun.Outcomes) != 0 || !slices.Equal(got.DryRun.NotServed, []string{"Widget.test.gitlabk8s.io/widgets"}) {
		t.Errorf("a kind the dry run finds not served: outcomes %+v, not served %q; want it checked offline", got.DryRun.Outcomes, got.DryRun.NotServed)
	}
}

// meetingChecker answers ServerSchemas and Namespace only once both are asked, within a
// second: they are asked together or the schemas are left out.
type meetingChecker struct {
	answeringChecker
	schemas, namespace chan struct{}
}

func (c *meetingChecker) ServerSchemas(ctx context.Context, gvs []schema.GroupVersion) (map[schema.GroupVersion]*validate.ServerSchema, []error) {
	close(c.schemas)
	select {
	case <-c.namespace:
		return nil, nil
	case <-time.After(time.Second):
		return nil, []error{errors.New("the namespace was not read while the schemas were")}
	}
}

func (c *meetingChecker) Namespace(ctx context.Context, name string) (helmrelease.Namespace, error) {
	close(c.namespace)
	select {
	case <-c.schemas:
	case <-time.After(time.Second):
	}
	return c.answeringChecker.Namespace(ctx, name)
}

// The namespace's labels, which the dry run needs, are read while the cluster's schemas are:
// through the agent's tunnel each is a round trip.
func TestRequest_checkReadsTheNamespaceWithTheSchemas(t *testing.T) {
	first := planned(t, Prepare(context.Background(), nil, webInputs(nil), nil), nil).Rendering
	recorded := deployedAs(first.Manifests, 1)
	c := &meetingChecker{
		answeringChecker: answeringChecker{namespace: map[string]string{PodSecurityEnforceLabel: "restricted"}},
		schemas:          make(chan struct{}), namespace: make(chan struct{}),
	}
	got := checked(t, webInputs(map[string]string{"config.greeting": "hi"}), recorded, CheckAll, c)
	if len(got.SchemaErrors) > 0 {
		t.Fatal(got.SchemaErrors)
	}
	if got.DryRun == nil || got.DryRun.Enforce != "restricted" || len(c.dryRun) != 1 {
		t.Fatalf("checked = %+v, dry-run %v; want the changed ConfigMap dry-run under the namespace's level", got.DryRun, c.dryRun)
	}
}

func nullDefaultInputs(set map[string]string) Inputs {
	in := webInputs(set)
	in.Chart = chart.Source{Chart: chartserver.FixtureChart("null-default")}
	in.Values.SetSensitive = nil
	return in
}

// An object that does not change but holds a null is dry-run with the objects that change: the
// upgrade applies it too, and a server-side apply takes its null as removing what the API
// server filled in. With nothing changed there is no upgrade, and nothing is dry-run.
func TestRequest_checkDryRunsUnchangedObjectsWithNulls(t *testing.T) {
	first := planned(t, Prepare(context.Background(), nil, nullDefaultInputs(nil), nil), nil).Rendering
	recorded := deployedAs(first.Manifests, 1)

	c := &answeringChecker{namespace: map[string]string{}}
	got := checked(t, nullDefaultInputs(map[string]string{"message": "changed"}), recorded, CheckAll, c)
	claim := "PersistentVolumeClaim/" + testNamespace + "/web-data"
	if !slices.Equal(c.dryRun, []string{"ConfigMap/" + testNamespace + "/web-config", claim}) {
		t.Fatalf("dry-run %q, want the changed ConfigMap and the claim with its null", c.dryRun)
	}
	var outcome *DryRunOutcome
	for i, o := range got.DryRun.Outcomes {
		if o.Key == "PersistentVolumeClaim/web-data" {
			outcome = &got.DryRun.Outcomes[i]
		}
	}
	if outcome == nil || !outcome.Unchanged || !slices.Equal(outcome.Nulls, []string{".spec.storageClassName"}) {
		t.Errorf("the claim's outcome = %+v, want it marked unchanged with its null at .spec.storageClassName", outcome)
	}
	for _, o := range got.DryRun.Outcomes {
		if o.Key != "PersistentVolumeClaim/web-data" && (o.Unchanged || len(o.Nulls) > 0) {
			t.Errorf("outcome %+v is marked, want only the claim's", o)
		}
	}

	c = &answeringChecker{namespace: map[string]string{}}
	if got = checked(t, nullDefaultInputs(nil), recorded, CheckAll, c); got.DryRun != nil || len(c.dryRun) != 0 {
		t.Errorf("nothing changed: %+v, dry-run %q; want no dry run", got.DryRun, c.dryRun)
	}
}

// The pods of the hooks the next apply runs are evaluated against the level their namespace
// enforces then, the namespace's or the one the environment's plan sets: the dry run never sees
// them, as Helm creates them while it applies. Hooks of other operations are left alone.
func TestRequest_checkEvaluatesTheHooksTheApplyRuns(t *testing.T) {
	inputs := func(message string, patches ...patch.Patch) Inputs {
		in := webInputs(map[string]string{"message": message})
		in.Name, in.Chart, in.Patches = "hooks", chart.Source{Chart: chartserver.FixtureChart("with-hooks")}, patches
		return in
	}
	installOnly := patch.Patch{Target: patch.Target{Kind: "Job", Name: "hooks-migrate"},
		Patch: `{"metadata": {"annotations": {"helm.sh/hook": "pre-install"}}}`}
	// A hook changed alone dry-runs nothing, and still upgrades the release, which runs it.
	hookAnnotated := patch.Patch{Target: patch.Target{Kind: "Job", Name: "hooks-migrate"},
		Patch: `{"metadata": {"annotations": {"example.com/revised": "yes"}}}`}
	first := planned(t, Prepare(context.Background(), nil, inputs("ready"), nil), nil).Rendering
	recorded := deployedAs(first.Manifests, 1)
	const jobKey, jobSource = "Job.batch/hooks-migrate", "with-hooks/templates/migrate-job.yaml"
	for _, tt := range []struct {
		name      string
		in        Inputs
		recorded  *Recorded
		planned   *PlannedLevel
		namespace map[string]string // nil: the namespace does not exist
		want      *PodSecurityRefusal
		// hookAlone says the hook alone changes: nothing is dry-run.
		hookAlone bool
	}{
		{"upgrade under the namespace's level", inputs("changed"), recorded, nil, map[string]string{PodSecurityEnforceLabel: "restricted"},
			&PodSecurityRefusal{Level: "restricted", Version: "latest"}, false},
		{"upgrade under a pinned version", inputs("changed"), recorded, nil, map[string]string{PodSecurityEnforceLabel: "restricted", PodSecurityVersionLabel: "v1.30"},
			&PodSecurityRefusal{Level: "restricted", Version: "v1.30"}, false},
		{"upgrade under a level the pods meet", inputs("changed"), recorded, nil, map[string]string{PodSecurityEnforceLabel: "baseline"}, nil, false},
		{"upgrade under the level the plan sets", inputs("changed"), recorded, &PlannedLevel{Enforce: "restricted"}, map[string]string{PodSecurityEnforceLabel: "baseline"},
			&PodSecurityRefusal{Level: "restricted", Version: "latest", Planned: true}, false},
		{"install into a namespace the apply creates", inputs("ready"), nil, &PlannedLevel{Enforce: "restricted"}, nil,
			&PodSecurityRefusal{Level: "restricted", Version: "latest", Planned: true}, false},
		{"upgrade running no hook with pods", inputs("changed", installOnly), recorded, nil, map[string]string{PodSecurityEnforceLabel: "restricted"}, nil, false},
		{"install running it", inputs("ready", installOnly), nil, nil, map[string]string{PodSecurityEnforceLabel: "restricted"},
			&PodSecurityRefusal{Level: "restricted", Version: "latest"}, false},
		{"upgrade changing the hook alone", inputs("ready", hookAnnotated), recorded, nil, map[string]string{PodSecurityEnforceLabel: "restricted"},
			&PodSecurityRefusal{Level: "restricted", Version: "latest"}, true},
		{"upgrade under the version the plan pins", inputs("changed"), recorded, &PlannedLevel{Enforce: "restricted", Version: "v1.31"}, map[string]string{PodSecurityEnforceLabel: "restricted"},
			&PodSecurityRefusal{Level: "restricted", Version: "v1.31", Planned: true}, false},
	} {
		tt.in.PodSecurity = tt.planned
		c := &answeringChecker{namespace: tt.namespace}
		got := checked(t, tt.in, tt.recorded, CheckAll, c)
		if got.DryRun == nil {
			t.Fatalf("%s: no dry run", tt.name)
		}
		if tt.hookAlone && (len(c.dryRun) > 0 || got.DryRun.Skipped != nil) {
			t.Errorf("%s: dry-run %q, skipped %v; want nothing dry-run, nothing skipped", tt.name, c.dryRun, got.DryRun.Skipped)
		}
		var hooks []PodSecurityRefusal
		for _, r := range got.DryRun.PodSecurity {
			if r.Key == jobKey {
				hooks = append(hooks, r)
			}
		}
		switch {
		case tt.want == nil && len(hooks) > 0:
			t.Errorf("%s: refused %+v, want the hook's pods left alone", tt.name, hooks)
		case tt.want != nil && (len(hooks) != 1 || hooks[0].Source != jobSource || hooks[0].Level != tt.want.Level || hooks[0].Version != tt.want.Version ||
			hooks[0].Planned != tt.want.Planned || !strings.Contains(hooks[0].Forbidden, "runAsNonRoot != true")):
			t.Errorf("%s: refused %+v, want the hook's pods refused as %+v", tt.name, hooks, *tt.want)
		}
	}
}

// With RunTests the test hooks run after the apply, and their pods are evaluated against the
// level they will meet too, marked as tests; without it they never run, and nothing is said.
func TestRequest_checkEvaluatesTheTestsRunTestsRuns(t *testing.T) {
	const smokeKey, smokeSource = "Job.batch/tst-smoke", "patchable/templates/tests/smoke.yaml"
	inputs := func(runTests bool) Inputs {
		in := webInputs(nil)
		in.Name, in.Chart, in.RunTests = "tst", chart.Source{Chart: chartserver.FixtureChart("patchable")}, runTests
		in.PodSecurity = &PlannedLevel{Enforce: "restricted"}
		return in
	}
	for _, runTests := range []bool{true, false} {
		got := checked(t, inputs(runTests), nil, CheckAll, &answeringChecker{namespace: map[string]string{}})
		if got.DryRun == nil {
			t.Fatalf("run_tests %v: no dry run", runTests)
		}
		var tests []PodSecurityRefusal
		for _, r := range got.DryRun.PodSecurity {
			if r.Test {
				tests = append(tests, r)
			} else if r.Key == smokeKey {
				t.Errorf("run_tests %v: the test hook refused as no test: %+v", runTests, r)
			}
		}
		switch {
		case !runTests && len(tests) > 0:
			t.Errorf("without run_tests: refused %+v, want no test evaluated", tests)
		case runTests && (len(tests) != 1 || tests[0].Key != smokeKey || tests[0].Source != smokeSource || !tests[0].Planned ||
			!strings.Contains(tests[0].Forbidden, "runAsNonRoot != true")):
			t.Errorf("with run_tests: refused %+v, want the smoke test's pods refused by the restricted level", tests)
		}
	}
}

// The objects a plan leaves as they are keep their pods under the level the environment's plan
// sets, and the API server refuses their new ones: they are named, whether the plan changes
// other objects (Checked) or none (RunningPodSecurity). Under the namespace's own level, in a
// namespace the apply creates, or with no level planned, nothing is.
func TestRequest_runningPodsUnderAPlannedLevel(t *testing.T) {
	first := planned(t, Prepare(context.Background(), nil, webInputs(nil), nil), nil).Rendering
	recorded := deployedAs(first.Manifests, 1)
	restricted := &PlannedLevel{Enforce: "restricted"}
	const deploymentKey = "Deployment.apps/web"
	isDeployment := func(refused []PodSecurityRefusal) bool {
		return len(refused) == 1 && refused[0].Key == deploymentKey && refused[0].Level == "restricted" && refused[0].Planned &&
			refused[0].Source == "web/templates/deployment.yaml" && strings.Contains(refused[0].Forbidden, "runAsNonRoot != true")
	}
	for _, tt := range []struct {
		name      string
		planned   *PlannedLevel
		namespace map[string]string // nil: the namespace does not exist
		set       map[string]string
		running   bool
	}{
		{"the Deployment left as it is", restricted, map[string]string{}, map[string]string{"config.greeting": "hi"}, true},
		{"the Deployment changed", restricted, map[string]string{}, map[string]string{"image.tag": "2"}, false},
		{"the namespace's own level", restricted, map[string]string{PodSecurityEnforceLabel: "restricted"}, map[string]string{"config.greeting": "hi"}, false},
		{"a namespace the apply creates", restricted, nil, map[string]string{"config.greeting": "hi"}, false},
		{"none planned", nil, map[string]string{}, map[string]string{"config.greeting": "hi"}, false},
	} {
		in := webInputs(tt.set)
		in.PodSecurity = tt.planned
		got := checked(t, in, recorded, CheckAll, &answeringChecker{namespace: tt.namespace})
		if got.DryRun == nil {
			t.Fatalf("%s: no dry run", tt.name)
		}
		if running := got.Running; tt.running != isDeployment(running) || (!tt.running && len(running) > 0) {
			t.Errorf("%s: running %+v, want the Deployment named: %v", tt.name, running, tt.running)
		}
	}

	// An upgrade that changes no object (the chart's version alone) dry-runs nothing, and
	// evaluates the running pods as a plan that changes nothing does.
	older := deployedAs(first.Manifests, 1)
	older.ChartVersion = "0.9.0"
	for _, tt := range []struct {
		name    string
		planned *PlannedLevel
		running bool
	}{{"the chart's version alone changed", restricted, true}, {"none planned", nil, false}} {
		in := webInputs(nil)
		in.PodSecurity = tt.planned
		req := Prepare(context.Background(), nil, in, nil)
		p := planned(t, req, older)
		if p.Unchanged {
			t.Fatalf("%s: the plan leaves the release as it is", tt.name)
		}
		got := req.Check(context.Background(), p, older, CheckAll, &answeringChecker{namespace: map[string]string{}}, nil)
		if got.DryRun != nil {
			t.Fatalf("%s: a dry run of %+v", tt.name, got.DryRun)
		}
		if tt.running != isDeployment(got.Running) || (!tt.running && len(got.Running) > 0) {
			t.Errorf("%s: running %+v, want the Deployment named: %v", tt.name, got.Running, tt.running)
		}
	}

	for _, tt := range []struct {
		name      string
		planned   *PlannedLevel
		namespace map[string]string
		running   bool
	}{
		{"a plan that changes nothing", restricted, map[string]string{}, true},
		{"under the namespace's own level", restricted, map[string]string{PodSecurityEnforceLabel: "restricted"}, false},
		{"none planned", nil, map[string]string{}, false},
	} {
		in := webInputs(nil)
		in.PodSecurity = tt.planned
		req := Prepare(context.Background(), nil, in, nil)
		p := planned(t, req, recorded)
		if !p.Unchanged {
			t.Fatalf("%s: the plan is not unchanged", tt.name)
		}
		running := req.RunningPodSecurity(context.Background(), p.Rendering, recorded, &answeringChecker{namespace: tt.namespace})
		if tt.running != isDeployment(running) || (!tt.running && len(running) > 0) {
			t.Errorf("%s: running %+v, want the Deployment named: %v", tt.name, running, tt.running)
		}
	}
}

// recordingChecker records the group versions of each ServerSchemas call, and counts the
// namespace's reads.
type recordingChecker struct {
	answeringChecker
	mu         sync.Mutex
	schemas    []string
	namespaces int
}

func (c *recordingChecker) ServerSchemas(_ context.Context, gvs []schema.GroupVersion) (map[schema.GroupVersion]*validate.ServerSchema, []error) {
	names := make([]string, len(gvs))
	for i, gv := range gvs {
		names[i] = gv.String()
	}
	slices.Sort(names)
	asked := strings.Join(names, " ")
	c.mu.Lock()
	defer c.mu.Unlock()
	c.schemas = append(c.schemas, asked)
	return nil, []error{errors.New("answered " + asked)}
}

func (c *recordingChecker) Namespace(ctx context.Context, name string) (helmrelease.Namespace, error) {
	c.mu.Lock()
	c.namespaces++
	c.mu.Unlock()
	return c.answeringChecker.Namespace(ctx, name)
}

// A plan whose configuration changed has the namespace and the cluster's schemas of the kinds
// recorded read while it renders (CheckAhead), and its checks take them: each is read once. A
// rendering of other group versions reads its own schemas; a plan that does not check against
// the cluster reads nothing ahead.
func TestRequest_checkTakesWhatWasReadAhead(t *testing.T) {
	withIngress := map[string]string{"ingress.enabled": "true"}
	for _, tt := range []struct {
		name           string
		recorded, set  map[string]string
		level          CheckLevel
		wantSchemas    []string
		wantNamespaces int
	}{
		{"the kinds recorded", nil, map[string]string{"config.greeting": "hi"}, CheckAll, []string{"apps/v1 v1"}, 1},
		{"an Ingress added", nil, map[string]string{"config.greeting": "hi", "ingress.enabled": "true"}, CheckAll,
			[]string{"apps/v1 v1", "apps/v1 networking.k8s.io/v1 v1"}, 1},
		{"the Ingress removed", withIngress, map[string]string{"config.greeting": "hi"}, CheckAll,
			[]string{"apps/v1 networking.k8s.io/v1 v1", "apps/v1 v1"}, 1},
		{"offline", nil, map[string]string{"config.greeting": "hi"}, CheckOffline, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			first := planned(t, Prepare(context.Background(), nil, webInputs(tt.recorded), nil), nil).Rendering
			recorded := deployedAs(first.Manifests, 1)
			c := &recordingChecker{answeringChecker: answeringChecker{namespace: map[string]string{}}}
			req := Prepare(context.Background(), nil, webInputs(tt.set), nil)
			req.CheckAhead(context.Background(), recorded, tt.level, c)
			p := planned(t, req, recorded)
			got := req.Check(context.Background(), p, recorded, tt.level, c, nil)
			c.mu.Lock()
			defer c.mu.Unlock()
			if !slices.Equal(c.schemas, tt.wantSchemas) || c.namespaces != tt.wantNamespaces {
				t.Fatalf("schemas asked %q, namespace read %d times; want %q and %d", c.schemas, c.namespaces, tt.wantSchemas, tt.wantNamespaces)
			}
			if n := len(tt.wantSchemas); n > 0 && (len(got.SchemaErrors) != 1 || got.SchemaErrors[0].Error() != "answered "+tt.wantSchemas[n-1]) {
				t.Fatalf("schema errors %v; want the answer to %q", got.SchemaErrors, tt.wantSchemas[n-1])
			}
			if tt.level == CheckAll && (got.DryRun == nil || len(c.dryRun) == 0) {
				t.Fatalf("dry run %+v of %q; want the changed objects dry-run", got.DryRun, c.dryRun)
			}
		})
	}

	// The chart's version alone changed: nothing is dry-run, and the running pods are evaluated
	// against the planned level with the namespace read ahead.
	first := planned(t, Prepare(context.Background(), nil, webInputs(nil), nil), nil).Rendering
	older := deployedAs(first.Manifests, 1)
	older.ChartVersion = "0.9.0"
	in := webInputs(nil)
	in.PodSecurity = &PlannedLevel{Enforce: "restricted"}
	c := &recordingChecker{answeringChecker: answeringChecker{namespace: map[string]string{}}}
	req := Prepare(context.Background(), nil, in, nil)
	req.CheckAhead(context.Background(), older, CheckAll, c)
	got := req.Check(context.Background(), planned(t, req, older), older, CheckAll, c, nil)
	c.mu.Lock()
	defer c.mu.Unlock()
	if got.DryRun != nil || len(got.Running) != 1 || c.namespaces != 1 {
		t.Fatalf("dry run %+v, running %+v, namespace read %d times; want no dry run, the Deployment refused, one read", got.DryRun, got.Running, c.namespaces)
	}
}
