package helmrelease

import (
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// Helm installs or upgrades over an existing object only when its label says Helm manages it
// and its annotations name the release (action's checkOwnership); the annotations alone name
// the owner the messages give.
func TestOwner_owns(t *testing.T) {
	web := Owner{Namespace: "review-1", Name: "web"}
	helmLabel := map[string]any{"app.kubernetes.io/managed-by": "Helm"}
	annotationsOf := func(o Owner) map[string]any {
		return map[string]any{"meta.helm.sh/release-name": o.Name, "meta.helm.sh/release-namespace": o.Namespace}
	}
	tests := []struct {
		name              string
		labels, annotated map[string]any
		owns              bool
		owner             Owner
		hasOwner          bool
	}{
		{name: "this release's", labels: helmLabel, annotated: annotationsOf(web), owns: true, owner: web, hasOwner: true},
		{name: "no metadata"},
		{name: "only the label", labels: helmLabel},
		{name: "annotations without the label", annotated: annotationsOf(web), owner: web, hasOwner: true},
		{
			name: "managed by another tool", labels: map[string]any{"app.kubernetes.io/managed-by": "kustomize"},
			annotated: annotationsOf(web), owner: web, hasOwner: true,
		},
		{
			name: "another release's", labels: helmLabel, annotated: annotationsOf(Owner{Namespace: "review-1", Name: "other"}),
			owner: Owner{Namespace: "review-1", Name: "other"}, hasOwner: true,
		},
		{
			name: "the same name in another namespace", labels: helmLabel, annotated: annotationsOf(Owner{Namespace: "review-2", Name: "web"}),
			owner: Owner{Namespace: "review-2", Name: "web"}, hasOwner: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			metadata := map[string]any{"name": "web"}
			if tt.labels != nil {
				metadata["labels"] = tt.labels
			}
			if tt.annotated != nil {
				metadata["annotations"] = tt.annotated
			}
			obj := manifest.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}
			if got := web.Owns(obj); got != tt.owns {
				t.Errorf("Owns = %v, want %v", got, tt.owns)
			}
			if owner, ok := OwnerOf(obj); owner != tt.owner || ok != tt.hasOwner {
				t.Errorf("OwnerOf = %v, %v; want %v, %v", owner, ok, tt.owner, tt.hasOwner)
			}
		})
	}
}
