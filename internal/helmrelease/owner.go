package helmrelease

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// Owner is the Helm release an object belongs to, as its ownership annotations name it.
type Owner struct{ Namespace, Name string }

func (o Owner) String() string { return o.Namespace + "/" + o.Name }

// Helm's label on every object it applies, beside the annotations that name the release.
const (
	labelManagedBy = "app.kubernetes.io/managed-by"
	managedByHelm  = "Helm"
)

// OwnerOf returns the release obj's ownership annotations name, false when they name none:
// an object created by other means than Helm (kubectl apply), which taking ownership adopts.
func OwnerOf(obj manifest.Object) (Owner, bool) {
	annotations := (&unstructured.Unstructured{Object: obj}).GetAnnotations()
	name, namespace := annotations[annotationReleaseName], annotations[annotationReleaseNamespace]
	if name == "" && namespace == "" {
		return Owner{}, false
	}
	return Owner{Namespace: namespace, Name: name}, true
}

// Owns reports whether Helm installs or upgrades release o over obj, an object that exists,
// without taking ownership of it: Helm's own rule (action's checkOwnership) asks for the label
// app.kubernetes.io/managed-by=Helm and both annotations naming o. An object whose annotations
// name o but that lacks the label is refused as well.
func (o Owner) Owns(obj manifest.Object) bool {
	owner, _ := OwnerOf(obj)
	return owner == o && (&unstructured.Unstructured{Object: obj}).GetLabels()[labelManagedBy] == managedByHelm
}
