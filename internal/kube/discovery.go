package kube

import (
	"context"
	"encoding/json"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/parallel"
)

// aggregatedDiscovery is client-go's discovery client reading the API server's two aggregated
// discovery documents, /api and /apis, at once rather than one after the other: through the
// GitLab agent's tunnel that is a round trip less before a kind can be mapped and a chart's
// .Capabilities known. Anything but two aggregated answers (an error, a server that serves
// only the unaggregated documents) is read again by client-go's own method, so its answers
// and errors are client-go's.
type aggregatedDiscovery struct {
	*discovery.DiscoveryClient
}

var aggregatedKind = schema.GroupVersionKind{Group: "apidiscovery.k8s.io", Version: "v2", Kind: "APIGroupDiscoveryList"}

// GroupsAndMaybeResources is GroupsAndMaybeResourcesWithContext without a deadline.
func (d aggregatedDiscovery) GroupsAndMaybeResources() (*metav1.APIGroupList, map[schema.GroupVersion]*metav1.APIResourceList, map[schema.GroupVersion]error, error) {
	return d.GroupsAndMaybeResourcesWithContext(context.Background())
}

// GroupsAndMaybeResourcesWithContext returns what client-go's method returns: the groups,
// the legacy group first, their resources, and the group versions whose resources failed.
func (d aggregatedDiscovery) GroupsAndMaybeResourcesWithContext(ctx context.Context) (*metav1.APIGroupList, map[schema.GroupVersion]*metav1.APIResourceList, map[schema.GroupVersion]error, error) {
	paths := []string{"/api", "/apis"}
	lists := make([]*apidiscoveryv2.APIGroupDiscoveryList, len(paths))
	parallel.Each(len(paths), len(paths), func(i int) {
		lists[i] = d.aggregated(ctx, paths[i])
	})
	if lists[0] == nil || lists[1] == nil {
		return d.DiscoveryClient.GroupsAndMaybeResourcesWithContext(ctx)
	}
	groups, resources, failed := discovery.SplitGroupsAndResources(*lists[0])
	apiGroups, apiResources, apiFailed := discovery.SplitGroupsAndResources(*lists[1])
	groups.Groups = append(groups.Groups, apiGroups.Groups...)
	for gv, list := range apiResources {
		resources[gv] = list
	}
	for gv, err := range apiFailed {
		failed[gv] = err
	}
	return groups, resources, failed, nil
}

// aggregated reads one aggregated discovery document, nil for any other answer.
func (d aggregatedDiscovery) aggregated(ctx context.Context, path string) *apidiscoveryv2.APIGroupDiscoveryList {
	var contentType string
	body, err := d.RESTClient().Get().AbsPath(path).
		SetHeader("Accept", discovery.AcceptV2+","+discovery.AcceptV1).
		Do(ctx).ContentType(&contentType).Raw()
	if err != nil {
		return nil
	}
	if ok, _ := discovery.ContentTypeIsGVK(contentType, aggregatedKind); !ok {
		return nil
	}
	var list apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil
	}
	return &list
}
