package helmrelease

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"helm.sh/helm/v4/pkg/engine"
)

var _ engine.ClientProvider = (*namespaceLookup)(nil)

// Lookup answers the lookup function of a chart rendered for a release in namespace, the
// way Helm's install answers it, but read-only and from namespace alone: objects of other
// namespaces, cluster-scoped objects and kinds the cluster does not serve are not found, as
// with helm template. It is what a plan renders with when it can reach the cluster, so a
// chart that keeps a generated password by looking up its Secret keeps it in the plan too.
func (c *Client) Lookup(namespace string) engine.ClientProvider {
	return &namespaceLookup{dynamic: c.clients.Dynamic, mapper: c.clients.Mapper, namespace: namespace}
}

// namespaceLookup maps a kind to its resource with the shared REST mapper and reads it
// with the shared dynamic client.
type namespaceLookup struct {
	dynamic   dynamic.Interface
	mapper    meta.RESTMapper
	namespace string
}

func (l *namespaceLookup) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	mapping, err := l.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return &scopedResource{resource: schema.GroupResource{Group: gvk.Group, Resource: kind}}, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
	scoped := &scopedResource{resource: mapping.Resource.GroupResource()}
	if namespaced {
		scoped.inNamespace = l.dynamic.Resource(mapping.Resource).Namespace(l.namespace)
		scoped.namespace = l.namespace
	}
	return scoped, namespaced, nil
}

// scopedResource is the only client lookup gets: Helm's lookup calls Namespace, Get and
// List, and the embedded interface, left nil, is never reached.
type scopedResource struct {
	dynamic.NamespaceableResourceInterface
	resource    schema.GroupResource
	namespace   string
	inNamespace dynamic.ResourceInterface
}

func (s *scopedResource) Namespace(namespace string) dynamic.ResourceInterface {
	if namespace == s.namespace && s.inNamespace != nil {
		return readOnlyResource{get: s.inNamespace.Get, list: s.inNamespace.List}
	}
	return s
}

// Get finds nothing outside the release's namespace.
func (s *scopedResource) Get(_ context.Context, name string, _ metav1.GetOptions, _ ...string) (*unstructured.Unstructured, error) {
	return nil, apierrors.NewNotFound(s.resource, name)
}

// List finds nothing outside the release's namespace.
func (s *scopedResource) List(context.Context, metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return nil, apierrors.NewNotFound(s.resource, "")
}

// readOnlyResource reads one namespace; it can neither write nor watch.
type readOnlyResource struct {
	dynamic.ResourceInterface
	get  func(ctx context.Context, name string, options metav1.GetOptions, subresources ...string) (*unstructured.Unstructured, error)
	list func(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error)
}

func (r readOnlyResource) Get(ctx context.Context, name string, options metav1.GetOptions, subresources ...string) (*unstructured.Unstructured, error) {
	return r.get(ctx, name, options, subresources...)
}

func (r readOnlyResource) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return r.list(ctx, opts)
}
