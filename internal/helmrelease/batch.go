package helmrelease

import (
	"context"
	"fmt"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/parallel"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kindLister lists the objects of one resource in a namespace ("" for cluster scope) that a
// field selector selects ("" for all). A reader that can list lets a release of many objects be
// read with one request per kind instead of one per object.
type kindLister interface {
	List(ctx context.Context, resource schema.GroupVersionResource, namespace, fieldSelector string) (map[string]*unstructured.Unstructured, error)
}

// recordType is the type of the Secrets in which Helm keeps a release's revisions.
const recordType = "helm.sh/release.v1"

// notRecords is the field selector of a LIST of Secrets that leaves Helm's records out: a
// release's namespace holds one per revision kept (ten by default), each its whole chart and
// manifest, and a read of the release's own Secrets reads none of them.
var notRecords = fields.OneTermNotEqualSelector("type", recordType).String()

// notRecord says whether obj is known not to be one of Helm's release records: any kind but
// a Secret, or a Secret whose type (Opaque when it names none) is another. A type that is not
// a string may be Helm's: the refresh's read-ahead (release's secretType) sets it to nil where
// the manifest hides the type.
func notRecord(obj map[string]any) bool {
	if obj["kind"] != "Secret" {
		return true
	}
	t, named := obj["type"]
	if !named {
		return true
	}
	s, ok := t.(string)
	return ok && s != recordType
}

// listSelector is the field selector of the LIST that reads refs, all of one resource: Helm's
// records left out of a list of Secrets none of which may be one; else none.
func listSelector(resource schema.GroupVersionResource, refs []objectRef) string {
	if resource != secrets {
		return ""
	}
	for _, ref := range refs {
		if !ref.NotRecord {
			return ""
		}
	}
	return notRecords
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
	var selectors []string
	groupOf := map[group]int{}
	lister, canList := reader.(kindLister)
	if canList {
		members := map[group][]objectRef{}
		for _, ref := range refs {
			g := group{ref.Resource, ref.Namespace}
			if members[g] = append(members[g], ref); len(members[g]) == minBatch {
				groupOf[g] = len(groups)
				groups = append(groups, g)
			}
		}
		selectors = make([]string, len(groups))
		for i, g := range groups {
			selectors[i] = listSelector(g.resource, members[g])
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
			lists[i], errs[i] = lister.List(ctx, groups[i].resource, groups[i].namespace, selectors[i])
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

func (d dynamicReader) List(ctx context.Context, resource schema.GroupVersionResource, namespace, fieldSelector string) (map[string]*unstructured.Unstructured, error) {
	items, err := d.lists.List(ctx, resource, namespace, fieldSelector)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*unstructured.Unstructured, len(items))
	for i := range items {
		byName[items[i].GetName()] = &items[i]
	}
	return byName, nil
}
