package kube

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// The API server's OpenAPI v3 documents are listed for the group versions asked only, under a
// key that carries their hash, and parse into the schemas the plan checks against.
func TestOpenAPIDocuments_listsTheGroupVersionsAskedFor(t *testing.T) {
	ctx, cluster := localCluster(t)
	cfg, err := cluster.RESTConfig(testcluster.AdminContext)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &Clients{Config: cfg, Kubernetes: kc}
	apps := schema.GroupVersion{Group: "apps", Version: "v1"}
	core := schema.GroupVersion{Version: "v1"}
	docs, err := c.OpenAPIDocuments(ctx, []schema.GroupVersion{apps, {Group: "nothing.gitlabk8s.test", Version: "v1"}, core})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0].GroupVersion != apps || docs[1].GroupVersion != core {
		t.Fatalf("documents = %+v, want apps/v1 and v1", docs)
	}
	for _, d := range docs {
		if !strings.HasPrefix(d.Key, cfg.Host+"/openapi/v3/") || !strings.Contains(d.Key, "hash=") {
			t.Errorf("key %q lacks the server or the document's hash", d.Key)
		}
	}
	doc, err := docs[0].Fetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := validate.ParseServerSchema(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Defines(apps.WithKind("Deployment")) || s.Defines(core.WithKind("Pod")) {
		t.Error("the apps/v1 document does not define Deployment alone")
	}
}
