package kube

import (
	"context"
	"fmt"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/parallel"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// FieldManager is the field manager of every server-side apply the provider
// makes. The fields it owns are the fields the provider manages: drift is
// looked for in them only.
const FieldManager = "gitlabk8s"

// Apply creates or updates obj by server-side apply as FieldManager and
// returns the object as stored.
//
// Conflicts are forced: obj holds exactly the fields the configuration
// declares, so a field another manager changed since (kubectl edit, a
// controller) is one the configuration claims, and applying restores it.
// Fields obj does not mention are left to their owners.
func (c *Clients) Apply(ctx context.Context, obj map[string]any) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: obj}
	ri, mapping, err := c.resourceFor(u.GroupVersionKind(), u.GetNamespace())
	if err != nil {
		return nil, err
	}
	applied, err := ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		err = refusalOf(err, "patch", mapping.Resource.Group, mapping.Resource.Resource, u.GetNamespace(), u.GetName())
		return nil, fmt.Errorf("apply %s: %w", describe(u), err)
	}
	return applied, nil
}

// Get reads the object obj names (apiVersion, kind, metadata.name and
// metadata.namespace). An object that does not exist is an error for which
// IsNotFound is true.
func (c *Clients) Get(ctx context.Context, obj map[string]any) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: obj}
	ri, mapping, err := c.resourceFor(u.GroupVersionKind(), u.GetNamespace())
	if err != nil {
		return nil, err
	}
	live, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
	if err != nil {
		err = refusalOf(err, "get", mapping.Resource.Group, mapping.Resource.Resource, u.GetNamespace(), u.GetName())
		return nil, fmt.Errorf("get %s: %w", describe(u), err)
	}
	return live, nil
}

// getAllAtOnce bounds the reads GetAll has in flight together.
const getAllAtOnce = 8

// GetAll reads the objects objs name as Get does, several at once: through the GitLab agent's
// tunnel each read is a round trip, and they are independent. The answers and errors are in
// the order of objs.
func (c *Clients) GetAll(ctx context.Context, objs []map[string]any) ([]*unstructured.Unstructured, []error) {
	live := make([]*unstructured.Unstructured, len(objs))
	errs := make([]error, len(objs))
	parallel.Each(len(objs), getAllAtOnce, func(i int) {
		live[i], errs[i] = c.Get(ctx, objs[i])
	})
	return live, errs
}

// Delete deletes the object obj names, in the background (its dependents are
// collected afterwards). A non-empty uid makes sure the object deleted is the
// one that was checked, not a new one of the same name. An object that is
// already gone is not an error.
func (c *Clients) Delete(ctx context.Context, obj map[string]any, uid types.UID) error {
	u := &unstructured.Unstructured{Object: obj}
	ri, mapping, err := c.resourceFor(u.GroupVersionKind(), u.GetNamespace())
	if err != nil {
		return err
	}
	return c.delete(ctx, ri, mapping, u.GetNamespace(), u.GetName(), uid)
}

func (c *Clients) delete(ctx context.Context, ri dynamic.ResourceInterface, mapping *meta.RESTMapping, namespace, name string, uid types.UID) error {
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &background}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	err := ri.Delete(ctx, name, opts)
	if err == nil || IsNotFound(err) {
		return nil
	}
	err = refusalOf(err, "delete", mapping.Resource.Group, mapping.Resource.Resource, namespace, name)
	what := mapping.Resource.Resource + "/" + name
	if namespace != "" {
		what += " in namespace " + namespace
	}
	return fmt.Errorf("delete %s: %w", what, err)
}

// resourceFor finds the REST resource of gvk. A kind the cached discovery
// does not know yet (a CRD installed a moment ago) makes it ask again once.
func (c *Clients) resourceFor(gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, *meta.RESTMapping, error) {
	mapping, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.Mapper.Reset()
		mapping, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("find the API resource of %s: %w", gvk.String(), err)
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.Dynamic.Resource(mapping.Resource).Namespace(namespace), mapping, nil
	}
	return c.Dynamic.Resource(mapping.Resource), mapping, nil
}

// IsNamespaced reports whether a kind is namespaced, from the cluster's discovery.
func (c *Clients) IsNamespaced(apiVersion, kind string) (bool, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return false, fmt.Errorf("parse apiVersion %q: %w", apiVersion, err)
	}
	_, mapping, err := c.resourceFor(gv.WithKind(kind), "")
	if err != nil {
		return false, err
	}
	return mapping.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

func describe(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return fmt.Sprintf("%s %s", u.GetKind(), u.GetName())
	}
	return fmt.Sprintf("%s %s in namespace %s", u.GetKind(), u.GetName(), u.GetNamespace())
}
