package helmrelease

import (
	"context"
	"fmt"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/parallel"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
// up to atOnce requests in flight (through the GitLab agent's tunnel each is a round trip): the
// LISTs of kinds with minBatch objects or more and the GETs of the others go out together.
func getAll(ctx context.Context, reader objectGetter, refs []objectRef, atOnce int) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, len(refs))
	type group struct {
		resource  schema.GroupVersionResource
		namespace string
	}
	var groups []group
	groupOf := map[group]int{}
	lister, canList := reader.(kindLister)
	if canList {
		counts := map[group]int{}
		for _, ref := range refs {
			g := group{ref.Resource, ref.Namespace}
			if counts[g]++; counts[g] == minBatch {
				groupOf[g] = len(groups)
				groups = append(groups, g)
			}
		}
	}
	var rest []int
	for i, ref := range refs {
		if _, ok := groupOf[group{ref.Resource, ref.Namespace}]; !ok {
			rest = append(rest, i)
		}
	}
	lists := make([]map[string]*unstructured.Unstructured, len(groups))
	errs := make([]error, len(groups)+len(rest))
	parallel.Each(len(groups)+len(rest), atOnce, func(i int) {
		if i < len(groups) {
			lists[i], errs[i] = lister.List(ctx, groups[i].resource, groups[i].namespace)
			return
		}
		j := rest[i-len(groups)]
		out[j], errs[i] = reader.Get(ctx, refs[j])
	})
	for i, err := range errs {
		switch {
		case err == nil:
		case i < len(groups):
			return nil, fmt.Errorf("list %s in namespace %q: %w", groups[i].resource.Resource, groups[i].namespace, err)
		default:
			ref := refs[rest[i-len(groups)]]
			return nil, fmt.Errorf("read %s: %w", ref.key(ref.Namespace), err)
		}
	}
	for i, ref := range refs {
		if g, ok := groupOf[group{ref.Resource, ref.Namespace}]; ok {
			out[i] = lists[g][ref.Name]
		}
	}
	return out, nil
}

func (d dynamicReader) List(ctx context.Context, resource schema.GroupVersionResource, namespace string) (map[string]*unstructured.Unstructured, error) {
	items, err := d.lists.List(ctx, resource, namespace)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*unstructured.Unstructured, len(items))
	for i := range items {
		byName[items[i].GetName()] = &items[i]
	}
	return byName, nil
}
