package helmrelease

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
)

// metadataReader reads objects' metadata only: whether they exist, whether they are being
// deleted and what finalizers hold them. A deletion wait needs nothing more, and the API server
// sends and the client decodes a fraction of each object.
type metadataReader struct{ client metadata.Interface }

var _ kindLister = metadataReader{}

func (m metadataReader) Get(ctx context.Context, ref objectRef) (*unstructured.Unstructured, error) {
	obj, err := m.client.Resource(ref.Resource).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return metadataObject(obj), nil
}

func (m metadataReader) List(ctx context.Context, resource schema.GroupVersionResource, namespace, fieldSelector string) (map[string]*unstructured.Unstructured, error) {
	list, err := m.client.Resource(resource).Namespace(namespace).List(ctx, metav1.ListOptions{FieldSelector: fieldSelector})
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		byName[list.Items[i].Name] = metadataObject(&list.Items[i])
	}
	return byName, nil
}

// metadataObject carries the metadata a deletion wait reads, and the labels and annotations
// that say which release applied the object (Owner.Owns).
func metadataObject(obj *metav1.PartialObjectMetadata) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(obj.APIVersion)
	u.SetKind(obj.Kind)
	u.SetNamespace(obj.Namespace)
	u.SetName(obj.Name)
	u.SetUID(obj.UID)
	u.SetDeletionTimestamp(obj.DeletionTimestamp)
	u.SetFinalizers(obj.Finalizers)
	u.SetLabels(obj.Labels)
	u.SetAnnotations(obj.Annotations)
	return u
}
