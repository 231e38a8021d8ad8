package manifest

import "testing"

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
