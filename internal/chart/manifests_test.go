package chart

import (
	"context"
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
)

func TestManifests_keysAndNormalization(t *testing.T) {
	rendered := render(t, loadFixture(t, "with-hooks"), Values{}, RenderOptions{})
	manifests, err := keyedManifests(rendered, "review-x", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ConfigMap/web-config", "ConfigMap/web-installed", "Job.batch/web-migrate"}
	if got := keysOf(manifests); !reflect.DeepEqual(got, want) {
		t.Errorf("keys = %v, want %v", got, want)
	}
	mustContain(t, "hook manifest", manifests["Job.batch/web-migrate"], "helm.sh/hook: pre-install,pre-upgrade", "namespace: review-x")

	crds := render(t, loadFixture(t, "with-crds"), Values{}, RenderOptions{})
	manifests, err = keyedManifests(crds, "review-x", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"CustomResourceDefinition.apiextensions.k8s.io/widgets.test.gitlabk8s.io", "Widget.test.gitlabk8s.io/web"}
	if got := keysOf(manifests); !reflect.DeepEqual(got, want) {
		t.Errorf("keys = %v, want %v", got, want)
	}
	if strings.Contains(manifests[want[0]], "namespace:") {
		t.Errorf("the cluster-scoped CRD has a namespace:\n%s", manifests[want[0]])
	}
}

func TestManifests_namespacedByDiscovery(t *testing.T) {
	rendered := render(t, loadFixture(t, "with-crds"), Values{}, RenderOptions{})
	clusterScopedWidgets := func(apiVersion, kind string) bool {
		return kind != "Widget" && kind != "CustomResourceDefinition"
	}
	manifests, err := keyedManifests(rendered, "review-x", nil, clusterScopedWidgets)
	if err != nil {
		t.Fatal(err)
	}
	if got := manifests["Widget.test.gitlabk8s.io/web"]; got == "" || strings.Contains(got, "namespace:") {
		t.Errorf("cluster-scoped Widget:\n%s", got)
	}
}

func TestManifests_secretValuesNeverShow(t *testing.T) {
	const canary = "c4nary-Pa55w0rd-7f3e"
	rendered := render(t, loadFixture(t, "web"), Values{
		Set: map[string]string{"replicaCount": "2"},
		SetSensitive: map[string]string{
			"secretValue":     canary,
			"config.token":    canary,
			"env.API_KEY":     "prefix-" + canary + "-suffix",
			"config.encoded":  base64.StdEncoding.EncodeToString([]byte(canary)),
			"config.short":    "pw",
			"config.multline": "line1\n" + canary + "\nline3",
		},
	}, RenderOptions{})
	sensitive := []string{canary, "prefix-" + canary + "-suffix", base64.StdEncoding.EncodeToString([]byte(canary)), "pw", "line1\n" + canary + "\nline3"}
	manifests, err := keyedManifests(rendered, "review-x", sensitive, nil)
	if err != nil {
		t.Fatal(err)
	}

	all := strings.Join(keysOf(manifests), "\n")
	for _, text := range manifests {
		all += "\n" + text
	}
	for _, forbidden := range []string{
		canary,
		base64.StdEncoding.EncodeToString([]byte(canary)),
		base64.RawStdEncoding.EncodeToString([]byte(canary)),
		"pw\n", ": pw",
	} {
		if strings.Contains(all, forbidden) {
			t.Errorf("manifests contain %q:\n%s", forbidden, all)
		}
	}

	secret := manifests["Secret/web"]
	mustContain(t, "Secret", secret, "password: (sensitive value hmac:")
	configMap := manifests["ConfigMap/web"]
	mustContain(t, "ConfigMap", configMap, "token: (sensitive value)", "greeting: hello")
	mustContain(t, "Deployment", manifests["Deployment.apps/web"], "name: API_KEY", "value: (sensitive value)", "replicas: 2")

	// A changed secret value shows as a changed marker, and only there.
	changed := render(t, loadFixture(t, "web"), Values{SetSensitive: map[string]string{"secretValue": canary + "-2"}}, RenderOptions{})
	changedManifests, err := keyedManifests(changed, "review-x", []string{canary + "-2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	same := render(t, loadFixture(t, "web"), Values{SetSensitive: map[string]string{"secretValue": canary}}, RenderOptions{})
	sameManifests, err := keyedManifests(same, "review-x", []string{canary}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if changedManifests["Secret/web"] == sameManifests["Secret/web"] {
		t.Error("a changed secret value does not change the Secret's manifest")
	}
	if changedManifests["Deployment.apps/web"] != sameManifests["Deployment.apps/web"] {
		t.Error("a changed secret value changed the Deployment's manifest")
	}
}

func TestManifests_duplicateObjects(t *testing.T) {
	l := inMemoryChart("dup", map[string]string{
		"templates/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\n",
		"templates/b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\n",
	})
	rendered := render(t, l, Values{}, RenderOptions{})
	if _, err := keyedManifests(rendered, "review-x", nil, nil); err == nil || !strings.Contains(err.Error(), "ConfigMap/same") {
		t.Errorf("duplicate objects: %v", err)
	}
}

func TestValidateReleaseName(t *testing.T) {
	tests := []struct {
		name    string
		wantErr string
	}{
		{"web", ""},
		{"review-mr-42.web", ""},
		{strings.Repeat("a", 53), ""},
		{strings.Repeat("a", 54), "at most 53"},
		{"", "empty"},
		{"Web", "invalid"},
		{"-web", "invalid"},
		{"web_app", "invalid"},
	}
	for _, tt := range tests {
		err := ValidateReleaseName(tt.name)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ValidateReleaseName(%q) = %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ValidateReleaseName(%q) = %v, want an error containing %q", tt.name, err, tt.wantErr)
		}
	}
}

// A test hook's Secret is neither shown nor applied, but its values are hidden wherever the
// chart also writes them, as a refresh hides them in what it reads back (every hook Helm
// recorded, test hooks too): the two sides show the same text.
func TestManifests_testHookSecretValuesNeverShow(t *testing.T) {
	const token = "t0ken-of-the-test-hook"
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: tested\nversion: 0.1.0\n",
		"values.yaml": "token: " + token + "\n",
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: client
data:
  token: {{ .Values.token }}
`,
		"templates/tests/secret.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: test-credentials
  annotations:
    helm.sh/hook: test
stringData:
  token: {{ .Values.token }}
`,
	})
	l, err := Load(context.Background(), Source{Chart: dir})
	if err != nil {
		t.Fatal(err)
	}
	rendered := render(t, l, Values{}, RenderOptions{})
	if len(rendered.TestHooks) != 1 || len(rendered.Hooks) != 0 {
		t.Fatalf("hooks %d, test hooks %d; want 0 and 1", len(rendered.Hooks), len(rendered.TestHooks))
	}
	manifests, err := keyedManifests(rendered, "review-x", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ConfigMap/client"}; !reflect.DeepEqual(keysOf(manifests), want) {
		t.Errorf("keys = %v, want %v", keysOf(manifests), want)
	}
	if strings.Contains(manifests["ConfigMap/client"], token) {
		t.Errorf("the test hook Secret's value shows in the ConfigMap:\n%s", manifests["ConfigMap/client"])
	}
}
