package helmrelease

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// IsNamespaced says whether a kind is namespaced, from the cluster's discovery; kinds the
// cluster does not serve (yet) fall back to manifest.BuiltinIsNamespaced.
func (c *Client) IsNamespaced(apiVersion, kind string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return manifest.BuiltinIsNamespaced(apiVersion, kind)
	}
	mapping, err := c.clients.Mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	if err != nil {
		return manifest.BuiltinIsNamespaced(apiVersion, kind)
	}
	return mapping.Scope.Name() == meta.RESTScopeNameNamespace
}

// LiveObjects reads the live version of each of objs (as a release manifest holds them,
// namespaced objects without a namespace being in namespace). The result has one entry per
// object, nil for an object that does not exist; a kind the cluster does not serve counts as
// not existing.
func (c *Client) LiveObjects(ctx context.Context, namespace string, objs []manifest.Object) ([]manifest.Object, error) {
	out := make([]manifest.Object, len(objs))
	refs := make([]objectRef, 0, len(objs))
	index := make([]int, 0, len(objs))
	for i, obj := range objs {
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		metadata, _ := obj["metadata"].(map[string]any)
		name, _ := metadata["name"].(string)
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return nil, fmt.Errorf("object %s %s: %w", kind, name, err)
		}
		mapping, err := c.clients.Mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("object %s %s: %w", kind, name, err)
		}
		ref := objectRef{Resource: mapping.Resource, APIVersion: apiVersion, Kind: kind, Name: name, NotRecord: notRecord(obj)}
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ref.Namespace, _ = metadata["namespace"].(string)
			if ref.Namespace == "" {
				ref.Namespace = namespace
			}
		}
		refs = append(refs, ref)
		index = append(index, i)
	}
	live, err := getAll(ctx, c.reader, refs, readsAtOnce)
	if err != nil {
		return nil, err
	}
	for j, obj := range live {
		if obj != nil {
			out[index[j]] = obj.Object
		}
	}
	return out, nil
}
