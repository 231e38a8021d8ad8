package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

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
