package helmrelease

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
)

var _ chart.Objects = (*namespaceLookup)(nil)

// Lookup answers the lookup function of a chart rendered for a release in namespace, the
// way Helm's install answers it, but read-only and from namespace alone: objects of other
// namespaces, cluster-scoped objects and kinds the cluster does not serve are not found, as
// with helm template. It is what a plan renders with when it can reach the cluster, so a
// chart that keeps a generated password by looking up its Secret keeps it in the plan too.
func (c *Client) Lookup(namespace string) chart.Objects {
	return &namespaceLookup{dynamic: c.clients.Dynamic, mapper: c.clients.Mapper, namespace: namespace}
}

// namespaceLookup maps a kind to its resource with the shared REST mapper and reads it
// with the shared dynamic client.
type namespaceLookup struct {
	dynamic   dynamic.Interface
	mapper    meta.RESTMapper
	namespace string
}

// Lookup returns the object, or the list of objects when name is empty, as Helm's lookup
// does: an empty map for what is not found.
func (l *namespaceLookup) Lookup(ctx context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	mapping, err := l.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return map[string]any{}, nil
	}
	if err != nil {
		return map[string]any{}, err
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace || namespace != l.namespace {
		return map[string]any{}, nil
	}
	resources := l.dynamic.Resource(mapping.Resource).Namespace(namespace)
	var content map[string]any
	if name != "" {
		obj, getErr := resources.Get(ctx, name, metav1.GetOptions{})
		if getErr == nil {
			content = obj.UnstructuredContent()
		}
		err = getErr
	} else {
		list, listErr := resources.List(ctx, metav1.ListOptions{})
		if listErr == nil {
			content = list.UnstructuredContent()
		}
		err = listErr
	}
	if apierrors.IsNotFound(err) {
		return map[string]any{}, nil
	}
	if err != nil {
		return map[string]any{}, err
	}
	return content, nil
}
