package helmrelease

import "github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"

// Owner is the Helm release an object belongs to, as its ownership annotations name it.
type Owner struct{ Namespace, Name string }

func (o Owner) String() string { return o.Namespace + "/" + o.Name }

// OwnerOf returns the release obj's ownership annotations name, false when they name none:
// an object created by other means than Helm (kubectl apply), which taking ownership adopts.
func OwnerOf(obj manifest.Object) (Owner, bool) {
	metadata, _ := obj["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	name, _ := annotations[annotationReleaseName].(string)
	namespace, _ := annotations[annotationReleaseNamespace].(string)
	if name == "" && namespace == "" {
		return Owner{}, false
	}
	return Owner{Namespace: namespace, Name: name}, true
}
