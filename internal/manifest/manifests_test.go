package manifest

import (
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func TestManifests_helmOutputMatchesGolden(t *testing.T) {
	manifests, err := NewRedactor(nil, testRedactionKey, nil).Manifests(loadFixture(t), fixtureNamespace, nil)
	if err != nil {
		t.Fatalf("Manifests: %v", err)
	}
	got := joinManifests(manifests)
	const golden = "testdata/helm-output.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("Manifests output differs from %s (run go test -update and review the diff):\n%s",
			golden, FormatChanges(DiffManifests(map[string]string{"golden": string(want)}, map[string]string{"golden": got})))
	}
}

func TestManifests_canaryAppearsNowhere(t *testing.T) {
	objs := loadFixture(t)
	forms := []string{canary}
	for _, encoding := range base64Encodings {
		forms = append(forms, encoding.EncodeToString([]byte(canary)))
	}
	tests := []struct {
		desc     string
		redactor *Redactor
	}{
		{"harvested from the Secret", NewRedactor(nil, testRedactionKey, nil)},
		{"also passed explicitly", NewRedactor([]string{canary}, testRedactionKey, nil)},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			manifests, err := tt.redactor.Manifests(objs, fixtureNamespace, nil)
			if err != nil {
				t.Fatalf("Manifests: %v", err)
			}
			out := joinManifests(manifests)
			for _, form := range forms {
				if strings.Contains(out, form) {
					t.Errorf("output contains the sensitive value as %q:\n%s", form, out)
				}
			}
			if !strings.Contains(out, "(sensitive value hmac:") || !strings.Contains(out, "(sensitive value)") {
				t.Errorf("output shows no redaction markers:\n%s", out)
			}
		})
	}
	if again := loadFixture(t); !equalObjects(objs, again) {
		t.Error("Manifests changed its input objects")
	}
}

func TestManifests_oneChangedValueChangesOneLineOfOneKey(t *testing.T) {
	tests := []struct {
		desc    string
		key     string
		change  func(objs []Object)
		removed string
		added   string
	}{
		{
			desc: "config value",
			key:  "ConfigMap/web-config",
			change: func(objs []Object) {
				findObject(objs, "ConfigMap", "web-config")["data"].(map[string]any)["LOG_LEVEL"] = "debug"
			},
			removed: "  LOG_LEVEL: info",
			added:   "  LOG_LEVEL: debug",
		},
		{
			desc: "line inside a multi-line value",
			key:  "ConfigMap/web-config",
			change: func(objs []Object) {
				data := findObject(objs, "ConfigMap", "web-config")["data"].(map[string]any)
				data["app.properties"] = strings.Replace(data["app.properties"].(string), "search,export", "search", 1)
			},
			removed: "    feature.flags=search,export",
			added:   "    feature.flags=search",
		},
		{
			desc: "long value",
			key:  "ConfigMap/web-config",
			change: func(objs []Object) {
				data := findObject(objs, "ConfigMap", "web-config")["data"].(map[string]any)
				data["motd"] = strings.Replace(data["motd"].(string), "fold it", "fold it, but does not", 1)
			},
			removed: "  motd: A long message of the day that is well over eighty characters wide, so a wrapping encoder would fold it.",
			added:   "  motd: A long message of the day that is well over eighty characters wide, so a wrapping encoder would fold it, but does not.",
		},
		{
			desc: "image",
			key:  "Deployment.apps/web",
			change: func(objs []Object) {
				container := findObject(objs, "Deployment", "web")["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
				container["image"] = "registry.example.com/group/web:1.4.3"
			},
			removed: "        image: registry.example.com/group/web:1.4.2",
			added:   "        image: registry.example.com/group/web:1.4.3",
		},
		{
			desc: "secret value",
			key:  "Secret/web-credentials",
			change: func(objs []Object) {
				findObject(objs, "Secret", "web-credentials")["stringData"].(map[string]any)["username"] = "web-admin"
			},
			removed: "  username: " + NewRedactor(nil, testRedactionKey, nil).marker([]byte("web")),
			added:   "  username: " + NewRedactor(nil, testRedactionKey, nil).marker([]byte("web-admin")),
		},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			keyed := NewRedactor(nil, testRedactionKey, nil)
			before, err := keyed.Manifests(loadFixture(t), fixtureNamespace, nil)
			if err != nil {
				t.Fatal(err)
			}
			objs := loadFixture(t)
			tt.change(objs)
			after, err := keyed.Manifests(objs, fixtureNamespace, nil)
			if err != nil {
				t.Fatal(err)
			}
			changes := DiffManifests(before, after)
			if len(changes) != 1 || changes[0].Key != tt.key || changes[0].Action != ActionUpdate {
				t.Fatalf("want one update of %s, got:\n%s", tt.key, FormatChanges(changes))
			}
			removed, added := changedLines(changes[0].UnifiedDiff)
			if !slices.Equal(removed, []string{tt.removed}) || !slices.Equal(added, []string{tt.added}) {
				t.Errorf("want exactly\n-%s\n+%s\ngot:\n%s", tt.removed, tt.added, changes[0].UnifiedDiff)
			}
		})
	}
}

func TestManifests_errorsNameTheObject(t *testing.T) {
	configMap := func(name, namespace string) Object {
		metadata := map[string]any{"name": name}
		if namespace != "" {
			metadata["namespace"] = namespace
		}
		return Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}
	}
	tests := []struct {
		desc    string
		objs    []Object
		wantErr string
	}{
		{"same name", []Object{configMap("a", ""), configMap("b", ""), configMap("a", "")}, "duplicate object ConfigMap/a: objects 1 and 3"},
		{"explicit default namespace", []Object{configMap("a", fixtureNamespace), configMap("a", "")}, "duplicate object ConfigMap/a"},
		{"no name", []Object{configMap("a", ""), {"apiVersion": "v1", "kind": "ConfigMap"}}, "object 2: ConfigMap has no metadata.name"},
		{"no kind", []Object{{"apiVersion": "v1"}}, "object 1: object has no kind"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			_, err := Manifests(tt.objs, fixtureNamespace, nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Manifests error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	if _, err := Manifests([]Object{configMap("a", ""), configMap("a", "other")}, fixtureNamespace, nil); err != nil {
		t.Errorf("same name in two namespaces: %v", err)
	}
}

func TestBuiltinIsNamespaced_knowsBuiltInClusterScopedKinds(t *testing.T) {
	tests := []struct {
		apiVersion, kind string
		want             bool
	}{
		{"v1", "ConfigMap", true},
		{"apps/v1", "Deployment", true},
		{"v1", "Namespace", false},
		{"rbac.authorization.k8s.io/v1", "ClusterRole", false},
		{"rbac.authorization.k8s.io/v1", "Role", true},
		{"apiextensions.k8s.io/v1", "CustomResourceDefinition", false},
		{"example.com/v1", "Namespace", true},
		{"monitoring.coreos.com/v1", "ServiceMonitor", true},
	}
	for _, tt := range tests {
		t.Run(tt.apiVersion+"/"+tt.kind, func(t *testing.T) {
			if got := BuiltinIsNamespaced(tt.apiVersion, tt.kind); got != tt.want {
				t.Errorf("BuiltinIsNamespaced(%q, %q) = %v, want %v", tt.apiVersion, tt.kind, got, tt.want)
			}
		})
	}
}

func equalObjects(a, b []Object) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		ra, errA := Render(a[i])
		rb, errB := Render(b[i])
		if errA != nil || errB != nil || ra != rb {
			return false
		}
	}
	return true
}

// Keys gives exactly the keys of Manifests, redacted the same way, without rendering.
func TestKeys_sameAsTheKeysOfManifests(t *testing.T) {
	objs := loadFixture(t)
	r := NewRedactor([]string{canary}, nil, nil)
	manifests, err := r.Manifests(objs, fixtureNamespace, nil)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := r.Keys(objs, fixtureNamespace, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != len(manifests) {
		t.Errorf("Keys gave %d keys, Manifests %d", len(keys), len(manifests))
	}
	for key := range manifests {
		if !keys[key] {
			t.Errorf("Keys lacks %s", key)
		}
	}
	dup := []Object{objs[0], objs[0]}
	if _, err := r.Keys(dup, fixtureNamespace, nil); err == nil || !strings.Contains(err.Error(), "duplicate object") {
		t.Errorf("Keys of a duplicated object: error %v, want a duplicate error", err)
	}
	// Without a redactor, as a release's core asks which keys its objects have.
	unredacted, err := Manifests(objs, fixtureNamespace, nil)
	if err != nil {
		t.Fatal(err)
	}
	plainKeys, err := Keys(objs, fixtureNamespace, nil)
	if err != nil || len(plainKeys) != len(unredacted) {
		t.Fatalf("Keys = %d keys, %v; Manifests %d", len(plainKeys), err, len(unredacted))
	}
	for key := range unredacted {
		if !plainKeys[key] {
			t.Errorf("Keys lacks %s", key)
		}
	}
}
