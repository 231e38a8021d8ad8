package planreport

import (
	"encoding/json"
	"strings"
	"testing"
)

// The attributes of gitlabk8s_release and gitlabk8s_environment other than
// manifests: `terraform show -json` holds them in clear text, sensitive or not.
var (
	releaseAttributes = []string{
		"id", "name", "namespace", "chart", "repository", "repository_username", "repository_password", "dependency_update",
		"version", "values", "set", "values_sensitive", "set_sensitive", "atomic", "wait", "timeout", "blocked_timeout",
		"max_history", "description", "recover_pending", "plan_checks", "force_replace", "cascade", "ignore_differences",
		"revision", "status", "chart_version", "app_version", "chart_digest", "urls", "repository_tls",
	}
	environmentAttributes = []string{
		"id", "name", "slug", "namespace", "uid", "labels", "annotations", "service_account", "resource_quota",
		"limit_range", "network_policy", "ci_job_access", "retain_on_destroy", "timeouts",
	}
)

// canary is the sensitive value planted everywhere but in what the report reads.
const canary = "hunter2-CANARY-7f3a"

// planted returns attrs with every attribute but manifests holding the canary,
// in the shapes attributes take: a string, a list, a map with the canary as a
// key and a value, an object.
func planted(attributes []string, manifests map[string]string) map[string]any {
	values := map[string]any{"manifests": manifests}
	for i, name := range attributes {
		switch i % 4 {
		case 0:
			values[name] = canary
		case 1:
			values[name] = []any{canary, map[string]any{canary: canary}}
		case 2:
			values[name] = map[string]any{canary: canary}
		default:
			values[name] = map[string]any{"nested": []any{canary}}
		}
	}
	return values
}

func TestRender_showsNothingButManifests(t *testing.T) {
	secretShown := strings.Replace(secretV1, "(sensitive value hmac:0123456789ab)", canary, 1)
	rel := release("app", []string{"delete", "create"}, nil, nil)
	rel.before = planted(releaseAttributes, map[string]string{"ConfigMap/app-content": configMapV1, "Secret/leaked": secretV1})
	rel.after = planted(releaseAttributes, map[string]string{"ConfigMap/app-content": configMapV2, "Secret/leaked": secretShown, "Secret/new": secretShown})
	// The plan marks sensitive what a sensitive input reached: the report shows
	// those entries as the plan does, never their text.
	rel.beforeSensitive = map[string]any{"set_sensitive": true, "manifests": map[string]any{"Secret/leaked": true}}
	rel.afterSensitive = map[string]any{"set_sensitive": true, "manifests": map[string]any{"Secret/leaked": true, "Secret/new": true}}
	rel.afterUnknown = map[string]any{"revision": true, canary: true}
	rel.replacePaths = []any{[]any{"set_sensitive", canary}}

	env := change{address: "gitlabk8s_environment.review", typ: environmentType, name: "review", actions: []string{"update"},
		before: planted(environmentAttributes, map[string]string{"ResourceQuota/quota": "spec:\n  hard:\n    cpu: \"2\"\n"}),
		after:  planted(environmentAttributes, map[string]string{"ResourceQuota/quota": "spec:\n  hard:\n    cpu: \"4\"\n"}),
	}
	other := change{address: "random_password.db", typ: "random_password", name: "db", actions: []string{"create"},
		after: map[string]any{"result": canary, "manifests": map[string]string{"Secret/x": canary}}}
	doc := planDoc(t, rel, env, other)

	// Everything else of the JSON holds it too: variables, configuration,
	// planned values, prior state, outputs, drift, a data source.
	var whole map[string]any
	if err := json.Unmarshal([]byte(doc), &whole); err != nil {
		t.Fatal(err)
	}
	everywhere := map[string]any{canary: canary, "values": map[string]any{"manifests": map[string]string{"Secret/x": canary}}}
	for _, key := range []string{"variables", "configuration", "planned_values", "prior_state", "output_changes", "relevant_attributes", "checks"} {
		whole[key] = everywhere
	}
	whole["resource_drift"] = []any{map[string]any{"address": "gitlabk8s_release.app", "mode": "managed", "type": releaseType, "name": "app",
		"change": map[string]any{"actions": []string{"update"}, "before": map[string]any{"manifests": map[string]string{"Secret/x": canary}}, "after": map[string]any{"manifests": map[string]string{"Secret/x": canary + "2"}}}}}
	rcs := whole["resource_changes"].([]any)
	whole["resource_changes"] = append(rcs, map[string]any{"address": "data.gitlabk8s_release.read", "mode": "data", "type": releaseType, "name": "read",
		"change": map[string]any{"actions": []string{"read"}, "after": map[string]any{"manifests": map[string]string{"Secret/x": canary}}}})
	planted, err := json.Marshal(whole)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(planted), canary) {
		t.Fatal("the plan JSON of this test holds no canary")
	}

	got := render(t, string(planted), Options{})
	if strings.Contains(got, canary) || strings.Contains(got, "hunter2") {
		t.Fatalf("the report shows the sensitive value:\n%s", got)
	}
	// It still shows what it may: the objects' changes and the plan's markers.
	for _, want := range []string{"+    <p>Hello from the second commit</p>", "<code>Secret/leaked</code> changed: (sensitive value)",
		"<code>Secret/new</code> added: (sensitive value)", "-    cpu: \"2\"", "`random_password.db` will be created"} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
}
