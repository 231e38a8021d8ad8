package chart

import (
	"context"

	"helm.sh/helm/v4/pkg/engine"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
)

// lookupFunc is the templates' lookup function answered by provider, as Helm's engine answers
// it from a cluster: one object by name, else the list; what does not exist is an empty map.
// Helm's engine takes a client provider and custom functions only apart, so the lookup is one
// of the custom functions.
func lookupFunc(ctx context.Context, provider engine.ClientProvider) func(apiVersion, kind, namespace, name string) (map[string]any, error) {
	return func(apiVersion, kind, namespace, name string) (map[string]any, error) {
		resources, namespaced, err := provider.GetClientFor(apiVersion, kind)
		if err != nil {
			return map[string]any{}, err
		}
		var client dynamic.ResourceInterface = resources
		if namespaced && namespace != "" {
			client = resources.Namespace(namespace)
		}
		if name != "" {
			obj, err := client.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				if apierrors.IsNotFound(err) {
					return map[string]any{}, nil
				}
				return map[string]any{}, err
			}
			return obj.UnstructuredContent(), nil
		}
		list, err := client.List(ctx, metav1.ListOptions{})
		if err != nil {
			if apierrors.IsNotFound(err) {
				return map[string]any{}, nil
			}
			return map[string]any{}, err
		}
		return list.UnstructuredContent(), nil
	}
}
