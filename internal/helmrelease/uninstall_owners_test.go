package helmrelease

import (
	"strings"
	"testing"

	helmkube "helm.sh/helm/v4/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/rest"
)

func configMapInfo(name string) *resource.Info {
	return &resource.Info{Namespace: "review-1", Name: name, Mapping: &meta.RESTMapping{
		Resource:         schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
	}}
}

// The client withheld from Helm's ownership check of an object goes back to the copy Helm
// deletes; an object left without one is refused, before Helm is asked to delete anything.
func TestOwnersAhead_givesBackWithheldClients(t *testing.T) {
	client := &rest.RESTClient{}
	a := &ownersAhead{withheld: map[objectRef]resource.RESTClient{refOf(configMapInfo("web")): client}}
	c := &contextKubeClient{owners: a}

	web, other := configMapInfo("web"), configMapInfo("other")
	_, errs := c.Delete(helmkube.ResourceList{web, other}, "Background")
	if web.Client != client {
		t.Errorf("web's client = %v, want the one withheld", web.Client)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "ConfigMap review-1/other") {
		t.Errorf("Delete errors = %v, want one naming the ConfigMap left without a client", errs)
	}
}
