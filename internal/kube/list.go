package kube

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Lister reads every object of one resource in a namespace with one LIST, its answer decoded
// in one pass. The dynamic client's List decodes a list's JSON about ten times over (client-go's
// kind sniffing, the list's items as raw messages, the whole list into a map it then drops,
// each item again): a refresh of a release of 1000 objects spent more CPU there than in any
// other step of its own.
type Lister struct{ client rest.Interface }

// newDynamic returns the dynamic client dynamic.NewForConfig makes, and a Lister on the same
// REST client (and so the same connections and retries).
func newDynamic(cfg *rest.Config) (*dynamic.DynamicClient, *Lister, error) {
	config := dynamic.ConfigFor(cfg)
	h, err := rest.HTTPClientFor(config)
	if err != nil {
		return nil, nil, err
	}
	config.GroupVersion = nil
	config.APIPath = "/if-you-see-this-search-for-the-break"
	rc, err := rest.UnversionedRESTClientForConfigAndClient(config, h)
	if err != nil {
		return nil, nil, err
	}
	return dynamic.New(rc), &Lister{client: rc}, nil
}

// List returns the objects of resource in namespace ("" for every namespace, or cluster scope)
// that fieldSelector selects ("" for all), as the dynamic client's List returns them. The errors
// are the REST client's.
func (l *Lister) List(ctx context.Context, resource schema.GroupVersionResource, namespace, fieldSelector string) ([]unstructured.Unstructured, error) {
	req := l.client.Get().AbsPath(resourcePath(resource, namespace)...).SetHeader("Accept", "application/json")
	if fieldSelector != "" {
		req = req.Param("fieldSelector", fieldSelector)
	}
	res := req.Do(ctx)
	if err := res.Error(); err != nil {
		return nil, err
	}
	body, _ := res.Raw()
	items, err := decodeList(body)
	if err != nil {
		return nil, fmt.Errorf("decode the list of %s: %w", resource.Resource, err)
	}
	return items, nil
}

// resourcePath is the path of a resource's collection, as the dynamic client builds it.
func resourcePath(r schema.GroupVersionResource, namespace string) []string {
	p := []string{"api", r.Version}
	if r.Group != "" {
		p = []string{"apis", r.Group, r.Version}
	}
	if namespace != "" {
		p = append(p, "namespaces", namespace)
	}
	return append(p, r.Resource)
}

// decodeList decodes a LIST's JSON answer into its items in one pass, giving what
// unstructured.UnstructuredJSONScheme gives: each item's object decoded by apimachinery's JSON
// (numbers as int64 when integral, else float64), an item with neither kind nor apiVersion (the
// items of a built-in kind's list) given the list's apiVersion and its kind without "List", and
// a list without a kind, or whose kind or apiVersion is not a string, refused.
func decodeList(body []byte) ([]unstructured.Unstructured, error) {
	var list struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Items      []map[string]any `json:"items"`
	}
	if err := utiljson.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	if list.Kind == "" {
		return nil, runtime.NewMissingKindErr(string(body))
	}
	itemKind := strings.TrimSuffix(list.Kind, "List")
	out := make([]unstructured.Unstructured, len(list.Items))
	for i, obj := range list.Items {
		out[i].Object = obj
		if out[i].GetKind() == "" && out[i].GetAPIVersion() == "" {
			out[i].SetKind(itemKind)
			out[i].SetAPIVersion(list.APIVersion)
		}
	}
	return out, nil
}
