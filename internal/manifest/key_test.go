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
