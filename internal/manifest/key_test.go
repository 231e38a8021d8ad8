package manifest

import (
	"strings"
	"testing"
)

func TestKey_kindGroupNamespaceName(t *testing.T) {
	object := func(apiVersion, kind, namespace, name string) Object {
		metadata := map[string]any{"name": name}
		if namespace != "" {
			metadata["namespace"] = namespace
		}
		return Object{"apiVersion": apiVersion, "kind": kind, "metadata": metadata}
	}
	tests := []struct {
		obj  Object
		want string
	}{
		{object("apps/v1", "Deployment", "", "web"), "Deployment.apps/web"},
		{object("apps/v1", "Deployment", "review-x", "web"), "Deployment.apps/web"},
		{object("v1", "ConfigMap", "", "web-config"), "ConfigMap/web-config"},
		{object("v1", "ConfigMap", "monitoring", "web-config"), "ConfigMap/monitoring/web-config"},
		{object("v1", "Namespace", "", "review-x"), "Namespace/review-x"},
		{object("rbac.authorization.k8s.io/v1", "Role", "", "deployer"), "Role.rbac.authorization.k8s.io/deployer"},
		{object("monitoring.coreos.com/v1", "ServiceMonitor", "monitoring", "web"), "ServiceMonitor.monitoring.coreos.com/monitoring/web"},
		{object("apps/v1beta2", "Deployment", "", "web"), "Deployment.apps/web"},
		{Object{"kind": "ConfigMap"}, "ConfigMap/"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Key(tt.obj, "review-x"); got != tt.want {
				t.Errorf("Key = %q, want %q", got, tt.want)
			}
		})
	}
}

// A sensitive value is hidden in a key's namespace and name, never in its kind or group: a
// short one ("app") must not turn Deployment.apps into a key another rendering does not give.
func TestRedactorKey_hidesNamesNotKindOrGroup(t *testing.T) {
	r := NewRedactor([]string{"app"}, nil, nil)
	for _, tc := range []struct {
		obj  Object
		want string
	}{
		{Object{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "review-app"}}, "Deployment.apps/web"},
		{Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "app-config", "namespace": "review-app"}}, "ConfigMap/(sensitive value)-config"},
		{Object{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": "db", "namespace": "other-app"}}, "StatefulSet.apps/other-(sensitive value)/db"},
		{Object{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "app"}}, "ClusterRole.rbac.authorization.k8s.io/(sensitive value)"},
	} {
		if got := r.Key(tc.obj, "review-app"); got != tc.want {
			t.Errorf("Key(%v) = %q, want %q", tc.obj, got, tc.want)
		}
	}
	if got, want := (*Redactor)(nil).Key(Object{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "app"}}, "review"), "Deployment.apps/app"; got != want {
		t.Errorf("nil Redactor Key = %q, want %q", got, want)
	}
}

// ParseKey reads back what Key wrote, and refuses what Key cannot write.
func TestParseKey_readsWhatKeyWrote(t *testing.T) {
	for _, obj := range []Object{
		{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}},
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "web-config", "namespace": "monitoring"}},
		{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "system:web"}},
		{"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": map[string]any{"name": "web.metrics", "namespace": "review-x"}},
	} {
		key := Key(obj, "review-x")
		kind, group, namespace, name, ok := ParseKey(key)
		if !ok {
			t.Errorf("ParseKey(%q) refused a key Key wrote", key)
			continue
		}
		wantGroup, _, _ := strings.Cut(obj["apiVersion"].(string), "/")
		if !strings.Contains(obj["apiVersion"].(string), "/") {
			wantGroup = ""
		}
		wantNamespace := objectNamespace(obj)
		if wantNamespace == "review-x" {
			wantNamespace = ""
		}
		if kind != obj["kind"] || group != wantGroup || namespace != wantNamespace || name != objectName(obj) {
			t.Errorf("ParseKey(%q) = %q, %q, %q, %q", key, kind, group, namespace, name)
		}
	}
	for _, key := range []string{"", "ConfigMap", "ConfigMap/", "/web", "ConfigMap//web", "a/b/c/d"} {
		if kind, group, namespace, name, ok := ParseKey(key); ok {
			t.Errorf("ParseKey(%q) = %q, %q, %q, %q, want it refused", key, kind, group, namespace, name)
		}
	}
}

// TopLevelScalar reads a top-level field of a written manifest, never a nested one or one in
// a block of text, and refuses what is not a scalar on the key's line.
func TestTopLevelScalar_readsTopLevelFieldsOnly(t *testing.T) {
	written, err := Render(Object{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"apiVersion": "label"}},
		"spec":     map[string]any{"template": map[string]any{"metadata": map[string]any{"annotations": map[string]any{"note": "kind: Secret\napiVersion: x\n"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"apiVersion": "apps/v1", "kind": "Deployment"} {
		if got, ok := TopLevelScalar(written, key); !ok || got != want {
			t.Errorf("TopLevelScalar(%s) = %q, %v, want %q in\n%s", key, got, ok, want, written)
		}
	}
	for _, tc := range []struct{ text, want string }{
		{"apiVersion: \"v1\"\n", "v1"},
		{"apiVersion: 'it''s'\n", "it's"},
		{"kind: Secret\napiVersion: v1", "v1"},
		{"data:\n  apiVersion: nested\n  note: |\n    apiVersion: in-text\napiVersion: v1\n", "v1"},
	} {
		if got, ok := TopLevelScalar(tc.text, "apiVersion"); !ok || got != tc.want {
			t.Errorf("TopLevelScalar(%q) = %q, %v, want %q", tc.text, got, ok, tc.want)
		}
	}
	for _, text := range []string{"metadata:\n  name: web\n", "apiVersion: |\n  v1\n", "apiVersion: &a v1\n", "apiVersion: v1 # comment\n", "apiVersion: 'v1\n", "apiVersion:\n"} {
		if got, ok := TopLevelScalar(text, "apiVersion"); ok {
			t.Errorf("TopLevelScalar(%q) = %q, want none", text, got)
		}
	}
}
