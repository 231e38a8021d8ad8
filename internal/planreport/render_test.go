package planreport

import (
	"fmt"
	"strings"
	"testing"
)

func TestRender_changedObjectShowsItsChangedLinesUnderTheirKeys(t *testing.T) {
	doc := planDoc(t, release("app", []string{"update"},
		map[string]string{"ConfigMap/app-content": configMapV1, "Deployment.apps/app": deploymentV1},
		map[string]string{"ConfigMap/app-content": configMapV2, "Deployment.apps/app": deploymentV1}))
	got := render(t, doc, Options{})

	// A run of one unchanged line is shown: its fold would be no shorter.
	want := "```diff\n" +
		" apiVersion: v1\n" +
		" data:\n" +
		"   healthz: ok\n" +
		"   index.html: |\n" +
		"     # (2 unchanged lines hidden)\n" +
		"-    <p>Hello from the first commit</p>\n" +
		"+    <p>Hello from the second commit</p>\n" +
		" # (6 unchanged lines hidden)\n" +
		"```\n"
	if !strings.Contains(got, want) {
		t.Errorf("the report lacks the ConfigMap's changed lines under their keys\n%s\nwant it to contain\n%s", got, want)
	}
	if !strings.Contains(got, "- **app**: 1 object changed\n") {
		t.Errorf("the report lacks the summary line \"app: 1 object changed\":\n%s", got)
	}
	for _, unchanged := range []string{"Deployment.apps/app", "nginx:1.27-alpine", "kind: ConfigMap", "app.kubernetes.io/instance"} {
		if strings.Contains(got, unchanged) {
			t.Errorf("the report shows %q, which the change does not touch:\n%s", unchanged, got)
		}
	}
}

func TestRender_listItemShowsItsName(t *testing.T) {
	after := strings.Replace(deploymentV1, "image: busybox:1.36", "image: busybox:1.37", 1)
	doc := planDoc(t, release("app", []string{"update"},
		map[string]string{"Deployment.apps/app": deploymentV1}, map[string]string{"Deployment.apps/app": after}))
	got := render(t, doc, Options{})

	want := " # (5 unchanged lines hidden)\n" +
		" spec:\n" +
		"   replicas: 1\n" +
		"   template:\n" +
		"     spec:\n" +
		"       containers:\n" +
		"       # (5 unchanged lines hidden)\n" +
		"-      - image: busybox:1.36\n" +
		"+      - image: busybox:1.37\n" +
		"         name: sidecar\n"
	if !strings.Contains(got, want) {
		t.Errorf("the report lacks the changed image under its container's name\n%s\nwant it to contain\n%s", got, want)
	}
	// An indented line of the first container's env list names its own item.
	envChanged := strings.Replace(deploymentV1, "value: hello", "value: bonjour", 1)
	got = render(t, planDoc(t, release("app", []string{"update"},
		map[string]string{"Deployment.apps/app": deploymentV1}, map[string]string{"Deployment.apps/app": envChanged})), Options{})
	for _, parent := range []string{"\n       containers:\n", "\n       - env:\n", "\n         - name: GREETING\n", "\n         name: app\n"} {
		if !strings.Contains(got, parent) {
			t.Errorf("the env change lacks its parent line %q:\n%s", strings.Trim(parent, "\n"), got)
		}
	}
}

func TestRender_summaryCountsObjectsRemovedChangedAdded(t *testing.T) {
	doc := planDoc(t,
		release("app", []string{"update"},
			map[string]string{"ConfigMap/app-content": configMapV1, "Deployment.apps/app": deploymentV1, "Service/old": "kind: Service\n"},
			map[string]string{"ConfigMap/app-content": configMapV2, "Deployment.apps/app": strings.Replace(deploymentV1, "replicas: 1", "replicas: 2", 1), "Secret/app": secretV1}),
		release("db", []string{"no-op"}, map[string]string{"Service/db": "kind: Service\n"}, map[string]string{"Service/db": "kind: Service\n"}))
	got := render(t, doc, Options{})

	if !strings.Contains(got, "- **app**: 1 object removed, 2 changed, 1 added\n") {
		t.Errorf("the summary does not count the release's objects:\n%s", got)
	}
	if strings.Contains(got, "db") {
		t.Errorf("the report shows the unchanged release db:\n%s", got)
	}
	// What cannot be undone first: the removal, then the changes, then the addition.
	order := []string{"<code>Service/old</code> removed", "<code>ConfigMap/app-content</code> changed", "<code>Deployment.apps/app</code> changed", "<code>Secret/app</code> added"}
	last := -1
	for _, s := range order {
		at := strings.Index(got, s)
		if at < last {
			t.Errorf("%q is not after the entries before it in %q:\n%s", s, order, got)
		}
		last = at
	}
}

func TestRender_markersShowAsInThePlan(t *testing.T) {
	rotated := strings.Replace(secretV1, "hmac:0123456789ab", "hmac:ba9876543210", 1)
	doc := planDoc(t, release("app", []string{"update"}, map[string]string{"Secret/app": secretV1}, map[string]string{"Secret/app": rotated}))
	got := render(t, doc, Options{})
	for _, want := range []string{"-  apiKey: (sensitive value hmac:0123456789ab)\n", "+  apiKey: (sensitive value hmac:ba9876543210)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks the plan's marker line %q:\n%s", want, got)
		}
	}
}

func TestRender_emptyPlanIsOneLine(t *testing.T) {
	doc := planDoc(t, release("app", []string{"no-op"}, map[string]string{"Service/app": "kind: Service\n"}, map[string]string{"Service/app": "kind: Service\n"}))
	got := render(t, doc, Options{})
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 2 || lines[0] != Marker("review/feature") || !strings.Contains(lines[1], "no changes") {
		t.Errorf("an empty plan's report is not its marker and one line saying no changes:\n%s", got)
	}
}

func TestRender_environmentFirstWithThePlansWording(t *testing.T) {
	env := change{
		address: "gitlabk8s_environment.review", typ: environmentType, name: "review", actions: []string{"delete", "create"},
		before:       map[string]any{"manifests": map[string]string{"Namespace/review-1": "kind: Namespace\nmetadata:\n  name: review-1\n", "ResourceQuota/quota": "kind: ResourceQuota\nspec:\n  hard:\n    cpu: \"2\"\n"}},
		after:        map[string]any{"manifests": map[string]string{"Namespace/review-2": "kind: Namespace\nmetadata:\n  name: review-2\n", "ResourceQuota/quota": "kind: ResourceQuota\nspec:\n  hard:\n    cpu: \"4\"\n"}},
		replacePaths: []any{[]any{"namespace"}, []any{"labels", "secret-label-value"}},
	}
	doc := planDoc(t, release("app", []string{"update"}, map[string]string{"ConfigMap/app-content": configMapV1}, map[string]string{"ConfigMap/app-content": configMapV2}), env)
	got := render(t, doc, Options{})

	want := "- :warning: **review** (environment): 1 object removed, 1 changed, 1 added; `gitlabk8s_environment.review` must be replaced (forced by `namespace`, `labels`)\n- **app**: 1 object changed\n"
	if !strings.Contains(got, want) {
		t.Errorf("the summary does not put the environment's replacement first, in the plan's words\n%s\nwant it to contain\n%s", got, want)
	}
	if strings.Contains(got, "secret-label-value") {
		t.Errorf("the report shows a map key of replace_paths, a value:\n%s", got)
	}
	if !strings.Contains(got, "-    cpu: \"2\"\n+    cpu: \"4\"\n") {
		t.Errorf("the report lacks the quota's changed line:\n%s", got)
	}
}

func TestRender_unknownObjects(t *testing.T) {
	whole := release("app", []string{"create"}, nil, map[string]string{})
	whole.afterUnknown = map[string]any{"manifests": true}
	got := render(t, planDoc(t, whole), Options{})
	if !strings.Contains(got, "- **app**: objects known after apply; `gitlabk8s_release.app` will be created\n") {
		t.Errorf("a release whose manifests are unknown is not said so:\n%s", got)
	}

	some := release("app", []string{"update"}, map[string]string{"Secret/app": secretV1}, map[string]string{"ConfigMap/app-content": configMapV1})
	some.afterUnknown = map[string]any{"manifests": map[string]any{"Secret/app": true, "Secret/tls": true}}
	got = render(t, planDoc(t, some), Options{})
	for _, want := range []string{"- **app**: 1 object changed, 2 added\n", "<code>Secret/app</code> changed: (known after apply)", "<code>Secret/tls</code> added: (known after apply)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
}

func TestRender_cutAtTheLimitWithALinkToTheRest(t *testing.T) {
	before, after := map[string]string{}, map[string]string{}
	for i := range 200 {
		key := fmt.Sprintf("ConfigMap/c%03d", i)
		before[key] = strings.Replace(configMapV1, "app-content", key, 1) + strings.Repeat("# padding\n", 50)
		after[key] = strings.Replace(before[key], "first", "second", 1)
	}
	doc := planDoc(t, release("app", []string{"update"}, before, after))
	const limit = 20_000
	const link = "https://gitlab.example.com/g/p/-/jobs/7/artifacts/file/gitlabk8s-plan.md"
	got := render(t, doc, Options{Limit: limit, FullReportURL: link})

	if len(got) > limit {
		t.Errorf("the report has %d characters, more than the limit %d", len(got), limit)
	}
	shown := strings.Count(got, "</details>")
	want := fmt.Sprintf("%d more objects are in [the whole report](%s)", 200-shown, link)
	if shown == 0 || !strings.Contains(got, want) {
		t.Errorf("the cut report (%d sections) lacks %q:\n%s", shown, want, got[max(0, len(got)-500):])
	}
	if whole := render(t, doc, Options{}); strings.Count(whole, "</details>") != 200 {
		t.Errorf("without a limit the report has %d sections, want 200", strings.Count(whole, "</details>"))
	}
}

func TestRender_fenceOutlastsBackticksInAManifest(t *testing.T) {
	withFence := "data:\n  README.md: |\n    ```sh\n    make\n    ```\nkind: ConfigMap\n"
	doc := planDoc(t, release("app", []string{"create"}, nil, map[string]string{"ConfigMap/docs": withFence}))
	got := render(t, doc, Options{})
	if !strings.Contains(got, "````yaml\n"+withFence+"````\n") {
		t.Errorf("the added manifest is not fenced by more backticks than it holds:\n%s", got)
	}
}

func TestParse_refusesWhatIsNotAPlan(t *testing.T) {
	for name, input := range map[string]string{"not JSON": "Plan: 1 to add", "no format_version": `{"resource_changes": []}`} {
		if _, err := Parse(strings.NewReader(input)); err == nil || !strings.Contains(err.Error(), "terraform show -json") {
			t.Errorf("%s: Parse error %v, want one naming terraform show -json", name, err)
		}
	}
}

func TestParse_marksOfAWholeValue(t *testing.T) {
	// A resource whose whole value the plan marks sensitive shows no manifest.
	hidden := release("app", []string{"create"}, nil, map[string]string{"Secret/app": secretV1})
	doc := strings.Replace(planDoc(t, hidden), `"after_sensitive":{}`, `"after_sensitive":true`, 1)
	if !strings.Contains(doc, `"after_sensitive":true`) {
		t.Fatalf("the plan JSON of this test has no after_sensitive true:\n%s", doc)
	}
	got := render(t, doc, Options{})
	if !strings.Contains(got, "<code>Secret/app</code> added: (sensitive value)") || strings.Contains(got, "hmac:") {
		t.Errorf("a wholly sensitive resource's manifest shows:\n%s", got)
	}
}
