package release

import (
	"context"
	"errors"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	rcommon "helm.sh/helm/v4/pkg/release/common"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

const testPassword = "s3cr3t-Passw0rd"

// webInputs are the inputs of release "web" of the web fixture chart, its password given as
// a sensitive value, with extra values set.
func webInputs(set map[string]string) Inputs {
	values := chart.Values{Set: set, SetSensitive: map[string]string{"secretValue": testPassword}}
	return Inputs{
		Namespace: testNamespace, Name: "web",
		Chart:           chart.Source{Chart: chartserver.FixtureChart("web")},
		Values:          values,
		Capabilities:    Capabilities{IsNamespaced: manifest.BuiltinIsNamespaced},
		Redactor:        manifest.NewRedactor(values.SensitiveInputs(), nil, nil),
		RedactionRecord: manifest.RedactionRecord{Key: []byte("0123456789abcdef0123456789abcdef")},
	}
}

// planned plans in and returns the plan.
func planned(t *testing.T, req *Request, recorded *Recorded) *Plan {
	t.Helper()
	p, err := req.Plan(context.Background(), recorded, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// deployedAs records manifests as the state of revision at its first apply.
func deployedAs(manifests map[string]string, revision int) *Recorded {
	return &Recorded{Manifests: maps.Clone(manifests), Complete: true, Revision: revision, Status: rcommon.StatusDeployed, ChartVersion: "1.0.0"}
}

// A plan over a state that shows what the release renders keeps the state; a changed value
// renders the next revision, and no form of the sensitive value shows in either.
func TestRequest_plan(t *testing.T) {
	first := planned(t, Prepare(context.Background(), nil, webInputs(nil), nil), nil)
	if first.Unchanged || first.Rendering.Options.Revision != 1 || first.Rendering.Options.IsUpgrade {
		t.Fatalf("first plan = unchanged %v, revision %d; want an install of revision 1", first.Unchanged, first.Rendering.Options.Revision)
	}
	for key, text := range first.Rendering.Manifests {
		if strings.Contains(text, testPassword) || strings.Contains(text, "czNjcjN0LVBhc3N3MHJk") {
			t.Errorf("%s shows the password: %s", key, text)
		}
	}
	recorded := deployedAs(first.Rendering.Manifests, 1)
	if again := planned(t, Prepare(context.Background(), nil, webInputs(nil), nil), recorded); !again.Unchanged {
		t.Errorf("a plan of the unchanged release is not unchanged")
	}
	changed := planned(t, Prepare(context.Background(), nil, webInputs(map[string]string{"config.greeting": "hi"}), nil), recorded)
	if changed.Unchanged || changed.Rendering.Options.Revision != 2 || !changed.Rendering.Options.IsUpgrade {
		t.Fatalf("changed plan = unchanged %v, revision %d; want an upgrade to revision 2", changed.Unchanged, changed.Rendering.Options.Revision)
	}
	ignored := Prepare(context.Background(), nil, webInputs(map[string]string{"config.greeting": "hi"}), nil)
	if p, err := ignored.Plan(context.Background(), recorded, func(map[string]string) bool { return true }); err != nil || !p.Unchanged {
		t.Errorf("a plan whose differences are all ignored = %+v, %v; want unchanged", p, err)
	}
}

// A plan that renders the recorded revision and then the next one reads Helm's storage once.
func TestRequest_planReadsHelmStorageOnce(t *testing.T) {
	stored, _ := webRevision(t, webInputs(nil))
	cluster, reads := countingCluster(t, stored)
	req := Prepare(context.Background(), cluster, webInputs(map[string]string{"config.greeting": "hi"}), nil)
	p := planned(t, req, &Recorded{Manifests: map[string]string{"ConfigMap/web": "old"}, Complete: true, Revision: 1, Status: rcommon.StatusDeployed, ChartVersion: "1.0.0"})
	if p.Unchanged || p.Rendering.Options.Revision != 2 {
		t.Fatalf("plan = unchanged %v, revision %d; want an upgrade to revision 2", p.Unchanged, p.Rendering.Options.Revision)
	}
	if *reads != 1 {
		t.Errorf("a plan read Helm's storage %d times, want once", *reads)
	}
}

// An apply decides from the history: a release to create that Helm has deployed is refused,
// and one that cannot be read is not applied.
func TestRequest_applyRefuses(t *testing.T) {
	stored := storedRelease(1, rcommon.StatusDeployed)
	stored.Name = "web"
	cluster, _ := countingCluster(t, stored)
	_, err := Prepare(context.Background(), cluster, webInputs(nil), nil).renderApply(context.Background(), nil)
	var exists *ExistsError
	if !errors.As(err, &exists) || exists.Last.Version != 1 {
		t.Errorf("creating a deployed release = %v, want ExistsError of revision 1", err)
	}
	_, err = Prepare(context.Background(), nil, webInputs(nil), nil).renderApply(context.Background(), nil)
	var history *HistoryError
	if !errors.As(err, &history) || !errors.Is(err, ErrNoHistory) {
		t.Errorf("applying without a cluster = %v, want a HistoryError", err)
	}
}

// An apply renders the revision the history decides with a seed of its own, compares Helm's
// stream with the rendering as it is and the plan with what the plan showed, and leaves the
// next plan its seed, what it drew and the digests its markers are kept by.
func TestRequest_apply(t *testing.T) {
	cluster, _ := countingCluster(t)
	in := webInputs(nil)
	var handed *manifest.Redactor
	in.OnRedactor = func(r *manifest.Redactor) { handed = r }
	req := Prepare(context.Background(), cluster, in, nil)
	previous := map[string]string{"ConfigMap/web": "shown by an earlier plan"}
	a, err := req.renderApply(context.Background(), &Recorded{Manifests: previous})
	if err != nil {
		t.Fatal(err)
	}
	if a.Next.Operation != helmrelease.OperationInstall || a.Rendering.Options.Revision != 1 {
		t.Errorf("apply = %s of revision %d, want an install of revision 1", a.Next.Operation, a.Rendering.Options.Revision)
	}
	if len(req.Generated.Seed) != 32 || string(a.Rendering.Options.Seed) != string(req.Generated.Seed) {
		t.Errorf("the apply rendered with seed %x, the request holds %x; want one drawn seed", a.Rendering.Options.Seed, req.Generated.Seed)
	}
	if !maps.Equal(a.Stream, a.Rendering.Redacted.Manifests) {
		t.Errorf("Helm's stream is compared with something else than the rendering")
	}
	gen, rec, err := req.applied(a)
	if err != nil {
		t.Fatal(err)
	}
	if string(gen.Seed) != string(req.Generated.Seed) || string(rec.Key) != string(req.RedactionRecord.Key) || len(rec.Digests) != len(a.Stream) {
		t.Errorf("Applied = seed %x, key %x, %d digests; want the request's seed and key and one digest per object", gen.Seed, rec.Key, len(rec.Digests))
	}
	if !strings.Contains(req.Redactor.String("password="+testPassword), "sensitive value") {
		t.Errorf("the request's redactor does not hide the password once rendered")
	}
	if handed == nil || handed != req.Redactor || handed == in.Redactor {
		t.Errorf("OnRedactor was handed %p, want the rendering's redactor %p", handed, req.Redactor)
	}
}

// installedWithDigests plans the install of webInputs and returns its rendering and the
// digests its apply records of the objects, under webInputs' key.
func installedWithDigests(t *testing.T) (*Rendering, map[string]string) {
	t.Helper()
	first := planned(t, Prepare(context.Background(), nil, webInputs(nil), nil), nil).Rendering
	digests, err := first.Redacted.ObjectDigests(webInputs(nil).RedactionRecord.Key, first.RedactionOptions)
	if err != nil {
		t.Fatal(err)
	}
	return first, digests
}

// A plan of a release whose import is not refreshed yet (Inputs.Imported) keeps its
// conservative manifests while nothing changes, as one whose record says so does; without
// either, a value hidden by the import is a change.
func TestRequest_planKeepsAnImportsManifests(t *testing.T) {
	first, digests := installedWithDigests(t)
	conservative := maps.Clone(first.Manifests)
	shown := conservative["ConfigMap/web"]
	if !strings.Contains(shown, "greeting: hello") {
		t.Fatalf("ConfigMap/web = %s, want the greeting", shown)
	}
	conservative["ConfigMap/web"] = strings.Replace(shown, "greeting: hello", "greeting: (sensitive value)", 1)
	recorded := deployedAs(conservative, 1)
	for _, tt := range []struct {
		name                   string
		imported, conservative bool
		want                   bool
	}{
		{"imported, not refreshed", true, false, true},
		{"conservative record", false, true, true},
		{"neither", false, false, false},
	} {
		in := webInputs(nil)
		in.Imported = tt.imported
		in.RedactionRecord.Digests, in.RedactionRecord.Conservative = digests, tt.conservative
		p := planned(t, Prepare(context.Background(), nil, in, nil), recorded)
		if p.Unchanged != tt.want {
			t.Errorf("%s: plan unchanged = %v, want %v", tt.name, p.Unchanged, tt.want)
		}
	}
}

// An object whose manifest was written before the release had its key (an unkeyed marker) keeps
// that manifest while it is unchanged, by its recorded digest, also in a plan that changes
// another object; once the object changes, it shows as rendered.
func TestRequest_planKeepsManifestsWrittenBeforeTheKey(t *testing.T) {
	first, digests := installedWithDigests(t)
	written := maps.Clone(first.Manifests)
	keyed := regexp.MustCompile(`\(sensitive value hmac:[0-9a-f]{12}\)`)
	var unkeyed []string
	for k, text := range written {
		if keyed.MatchString(text) {
			written[k] = keyed.ReplaceAllString(text, "(sensitive value)")
			unkeyed = append(unkeyed, k)
		}
	}
	if len(unkeyed) == 0 {
		t.Fatal("no manifest of the web chart shows a keyed marker")
	}
	recorded := deployedAs(written, 1)
	in := webInputs(nil)
	in.RedactionRecord.Digests = digests
	if p := planned(t, Prepare(context.Background(), nil, in, nil), recorded); !p.Unchanged {
		t.Errorf("a plan of the unchanged release over manifests written before its key is not unchanged")
	}
	in = webInputs(map[string]string{"config.greeting": "hi"})
	in.RedactionRecord.Digests = digests
	p := planned(t, Prepare(context.Background(), nil, in, nil), recorded)
	if p.Unchanged {
		t.Fatal("a changed greeting planned no change")
	}
	for _, k := range unkeyed {
		if p.Rendering.Manifests[k] != written[k] {
			t.Errorf("%s, unchanged, not kept as written before the key:\n%s\nwant:\n%s", k, p.Rendering.Manifests[k], written[k])
		}
	}
	changedSecret := webInputs(nil)
	changedSecret.Values.SetSensitive = map[string]string{"secretValue": "another-Passw0rd"}
	changedSecret.Redactor = manifest.NewRedactor(changedSecret.Values.SensitiveInputs(), nil, nil)
	changedSecret.RedactionRecord.Digests = digests
	p = planned(t, Prepare(context.Background(), nil, changedSecret, nil), recorded)
	for _, k := range unkeyed {
		if p.Rendering.Manifests[k] == written[k] {
			t.Errorf("%s, whose value changed, kept as written before the key", k)
		}
	}
}

// Without ReplaceDefinitions (crd_policy create), an upgrade's plan names the definitions of
// crds/ it shows changed or added, which the apply leaves as the cluster has them; an install,
// an unchanged definition and create_replace name none.
func TestRequest_planNamesTheDefinitionsAnUpgradeLeaves(t *testing.T) {
	in := withCRDsInputs()
	in.ReplaceDefinitions = false
	first := planned(t, Prepare(context.Background(), nil, in, nil), nil)
	const key = definitionKeyPrefix + "widgets.test.gitlabk8s.io"
	if _, ok := first.Rendering.Manifests[key]; !ok || len(first.DefinitionsNotApplied) != 0 {
		t.Fatalf("install: manifests %v, not applied %q; want the definition shown and none left", slices.Collect(maps.Keys(first.Rendering.Manifests)), first.DefinitionsNotApplied)
	}
	older := maps.Clone(first.Rendering.Manifests)
	older[key] = strings.Replace(older[key], "size", "width", 1)
	if older[key] == first.Rendering.Manifests[key] {
		t.Fatalf("the definition has no field size:\n%s", older[key])
	}
	withoutIt := maps.Clone(first.Rendering.Manifests)
	delete(withoutIt, key)
	for _, tt := range []struct {
		name     string
		recorded map[string]string
		replace  bool
		want     []string
	}{
		{"changed", older, false, []string{key}},
		{"added", withoutIt, false, []string{key}},
		{"changed under create_replace", older, true, nil},
	} {
		in.ReplaceDefinitions = tt.replace
		got := planned(t, Prepare(context.Background(), nil, in, nil), deployedAs(tt.recorded, 1))
		if got.Unchanged || !slices.Equal(got.DefinitionsNotApplied, tt.want) {
			t.Errorf("%s: unchanged %v, not applied %q; want %q", tt.name, got.Unchanged, got.DefinitionsNotApplied, tt.want)
		}
	}
	// A definition the chart keeps as it was: nothing to say, whatever else changes.
	changedElsewhere := maps.Clone(first.Rendering.Manifests)
	for k := range changedElsewhere {
		if k != key {
			changedElsewhere[k] += "# changed\n"
		}
	}
	in.ReplaceDefinitions = false
	if got := planned(t, Prepare(context.Background(), nil, in, nil), deployedAs(changedElsewhere, 1)); got.Unchanged || len(got.DefinitionsNotApplied) != 0 {
		t.Errorf("the definition unchanged: unchanged %v, not applied %q; want an upgrade naming none", got.Unchanged, got.DefinitionsNotApplied)
	}
}
