package helmrelease

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
)

// kindLister lists every object of one resource in a namespace ("" for cluster scope). A
// reader that can list lets a release of many objects be read with one request per kind
// instead of one per object.
type kindLister interface {
	List(ctx context.Context, resource schema.GroupVersionResource, namespace string) (map[string]*unstructured.Unstructured, error)
}

// readsAtOnce bounds the requests a read of a release's objects has in flight together: a
// refresh's, or the one before an apply.
const readsAtOnce = 8

// pollReadsAtOnce is that bound for the reads of a wait, repeated every poll: one at a time,
// so that a poll's requests stay in their order and its pace is the poll's.
const pollReadsAtOnce = 1

// minBatch is the number of objects of one kind from which a LIST is cheaper than GETs.
const minBatch = 3

// getAll reads refs, returning nil for objects that do not exist, in the order of refs, with
// up to atOnce requests in flight (through the GitLab agent's tunnel each is a round trip).
func getAll(ctx context.Context, reader objectGetter, refs []objectRef, atOnce int) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, len(refs))
	type group struct {
		resource  schema.GroupVersionResource
		namespace string
	}
	batched := map[group]map[string]*unstructured.Unstructured{}
	if lister, ok := reader.(kindLister); ok {
		counts := map[group]int{}
		var groups []group
		for _, ref := range refs {
			g := group{ref.Resource, ref.Namespace}
			if counts[g]++; counts[g] == minBatch {
				groups = append(groups, g)
			}
		}
		lists := make([]map[string]*unstructured.Unstructured, len(groups))
		errs := make([]error, len(groups))
		kube.Concurrently(len(groups), atOnce, func(i int) {
			lists[i], errs[i] = lister.List(ctx, groups[i].resource, groups[i].namespace)
		})
		for i, g := range groups {
			if errs[i] != nil {
				return nil, fmt.Errorf("list %s in namespace %q: %w", g.resource.Resource, g.namespace, errs[i])
			}
			batched[g] = lists[i]
		}
	}
	var rest []int
	for i, ref := range refs {
		if objs, ok := batched[group{ref.Resource, ref.Namespace}]; ok {
			out[i] = objs[ref.Name]
			continue
		}
		rest = append(rest, i)
	}
	errs := make([]error, len(rest))
	kube.Concurrently(len(rest), atOnce, func(j int) {
		out[rest[j]], errs[j] = reader.Get(ctx, refs[rest[j]])
	})
	for j, err := range errs {
		if err != nil {
			ref := refs[rest[j]]
			return nil, fmt.Errorf("read %s: %w", ref.key(ref.Namespace), err)
		}
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
