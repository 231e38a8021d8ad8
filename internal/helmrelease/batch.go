package helmrelease

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kindLister lists every object of one resource in a namespace ("" for cluster scope). A
// reader that can list lets a release of many objects be read with one request per kind
// instead of one per object.
type kindLister interface {
	List(ctx context.Context, resource schema.GroupVersionResource, namespace string) (map[string]*unstructured.Unstructured, error)
}

// minBatch is the number of objects of one kind from which a LIST is cheaper than GETs.
const minBatch = 3

// getAll reads refs, returning nil for objects that do not exist, in the order of refs.
func getAll(ctx context.Context, reader objectGetter, refs []objectRef) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, len(refs))
	type group struct {
		resource  schema.GroupVersionResource
		namespace string
	}
	batched := map[group]map[string]*unstructured.Unstructured{}
	if lister, ok := reader.(kindLister); ok {
		counts := map[group]int{}
		for _, ref := range refs {
			counts[group{ref.Resource, ref.Namespace}]++
		}
		for g, n := range counts {
			if n < minBatch {
				continue
			}
			objs, err := lister.List(ctx, g.resource, g.namespace)
			if err != nil {
				return nil, fmt.Errorf("list %s in namespace %q: %w", g.resource.Resource, g.namespace, err)
			}
			batched[g] = objs
		}
	}
	for i, ref := range refs {
		if objs, ok := batched[group{ref.Resource, ref.Namespace}]; ok {
			out[i] = objs[ref.Name]
			continue
		}
		obj, err := reader.Get(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", ref.key(ref.Namespace), err)
		}
		out[i] = obj
	}
	return out, nil
}

func (d dynamicReader) List(ctx context.Context, resource schema.GroupVersionResource, namespace string) (map[string]*unstructured.Unstructured, error) {
	list, err := d.client.Resource(resource).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		byName[list.Items[i].GetName()] = &list.Items[i]
	}
	return byName, nil
}
