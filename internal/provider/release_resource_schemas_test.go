package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// A custom resource whose definition is installed in the cluster, not by the chart, is checked
// against the cluster's own schema of it: a field the definition does not declare fails the
// plan, naming the field and the schema, before any dry run.
func TestAccRelease_checksAgainstTheClusterSchema(t *testing.T) {
	e := testAccRelease(t)
	group := e.namespace + ".gitlabk8s.test"
	installPartDefinition(t, e, group)
	set := fmt.Sprintf(`"installedKind.group" = %q`, group)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:   checksApplied(e.namespace, set+`, "installedKind.colour" = "red"`),
				PlanOnly: true,
				ExpectError: wrappedPattern(`(?s)Invalid Object Fields.*Part.` + strings.ReplaceAll(group, ".", `\.`) + `/checks \(` + group + `/v1 Part, from ` +
					`checks/templates/part.yaml\) has fields that the cluster's schema of its kind \(the API server's OpenAPI\) does not accept.*` +
					`\.spec\.colour: field not declared in schema`),
			},
			{
				Config:             checksApplied(e.namespace, set),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// installPartDefinition installs the CustomResourceDefinition of Part in group (spec.size only),
// removes it when the test ends, and waits until the API server publishes its OpenAPI schema.
func installPartDefinition(t *testing.T, e *releaseTestEnv, group string) {
	t.Helper()
	crds := definitionClient(t, e)
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "parts." + group},
		"spec": map[string]any{
			"group": group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": "parts", "singular": "part", "kind": "Part", "listKind": "PartList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"spec": map[string]any{"type": "object", "properties": map[string]any{"size": map[string]any{"type": "integer"}}},
					},
				}},
			}},
		},
	}}
	ctx := context.Background()
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.GetName(), metav1.DeleteOptions{}) })
	path := "apis/" + group + "/v1"
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		index, err := e.kube.Discovery().RESTClient().Get().AbsPath("/openapi/v3").DoRaw(ctx)
		return err == nil && strings.Contains(string(index), `"`+path+`"`), nil
	})
	if err != nil {
		t.Fatalf("the API server never published the OpenAPI schema of %s: %v", path, err)
	}
}

// A document is fetched once per key, however many releases ask at once; a failed fetch is
// tried again by the next plan.
func TestSchemaCache_fetchesOncePerKeyAndRetriesFailures(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "validate", "testdata", "openapi-apps-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	cache := &schemaCache{entries: map[string]*schemaEntry{}}
	var fetches atomic.Int32
	fail := atomic.Bool{}
	fail.Store(true)
	d := kube.OpenAPIDocument{Key: "https://127.0.0.1/openapi/v3/apis/apps/v1?hash=1", Fetch: func(context.Context) ([]byte, error) {
		fetches.Add(1)
		if fail.Load() {
			return nil, errors.New("connection reset")
		}
		return doc, nil
	}}
	if _, err := cache.get(context.Background(), d); err == nil {
		t.Fatal("a failed fetch gave no error")
	}
	fail.Store(false)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s, err := cache.get(context.Background(), d); err != nil || s == nil {
				t.Errorf("get = %v, %v", s, err)
			}
		}()
	}
	wg.Wait()
	if n := fetches.Load(); n != 2 {
		t.Errorf("fetched %d times, want 2 (the failure, then once for all)", n)
	}
}

// documentLister hands out fixed documents, as kube.Clients.OpenAPIDocuments would.
type documentLister []kube.OpenAPIDocument

func (l documentLister) OpenAPIDocuments(context.Context, []schema.GroupVersion) ([]kube.OpenAPIDocument, error) {
	return l, nil
}

// A document that does not come in time is left out, and its objects are checked against the
// shipped schema; the plan waits no longer than clusterSchemaTimeout.
func TestClusterSchemas_aSlowDocumentIsLeftOut(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "validate", "testdata", "openapi-apps-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { clusterSchemaTimeout = d }(clusterSchemaTimeout)
	clusterSchemaTimeout = 200 * time.Millisecond
	apps := schema.GroupVersion{Group: "apps", Version: "v1"}
	core := schema.GroupVersion{Version: "v1"}
	lister := documentLister{
		{GroupVersion: apps, Key: t.Name() + "/apps/v1", Fetch: func(context.Context) ([]byte, error) { return doc, nil }},
		{GroupVersion: core, Key: t.Name() + "/v1", Fetch: func(ctx context.Context) ([]byte, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}},
	}
	m := &releaseModel{Name: types.StringValue("web"), Namespace: types.StringValue("review")}
	start := time.Now()
	got := clusterSchemas(context.Background(), m, lister, nil)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("waited %s for a document that never came", elapsed)
	}
	if got[apps] == nil || got[core] != nil || len(got) != 1 {
		t.Errorf("schemas = %v, want apps/v1 alone", got)
	}
}

// Documents that fail together log from their goroutines at once, with the redactor of a model
// that may not have made one yet: clusterSchemas makes it before starting them.
func TestClusterSchemas_failuresLogConcurrently(t *testing.T) {
	var lister documentLister
	for i := range 8 {
		gv := schema.GroupVersion{Group: fmt.Sprintf("g%d.example.com", i), Version: "v1"}
		lister = append(lister, kube.OpenAPIDocument{GroupVersion: gv, Key: t.Name() + "/" + gv.String(), Fetch: func(context.Context) ([]byte, error) {
			return nil, errors.New("unavailable")
		}})
	}
	m := &releaseModel{Name: types.StringValue("web"), Namespace: types.StringValue("review")}
	if got := clusterSchemas(context.Background(), m, lister, nil); len(got) != 0 {
		t.Errorf("clusterSchemas = %v, want none", got)
	}
}

// definitionClient is the admin's client of CustomResourceDefinitions.
func definitionClient(t *testing.T, e *releaseTestEnv) dynamic.ResourceInterface {
	t.Helper()
	cfg, err := e.cluster.RESTConfig(testcluster.AdminContext)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dc.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
}
