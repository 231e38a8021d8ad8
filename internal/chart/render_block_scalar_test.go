package chart

import (
	"context"
	"reflect"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// A template that ends with a "|" block scalar: Helm applies the document with a trailing
// newline, so the planned object must keep the scalar's final newline too, or the apply
// would find a different rendering than the plan showed.
func TestRender_objectsMatchTheManifestHelmApplies(t *testing.T) {
	ch := &helmchart.Chart{
		Metadata: &helmchart.Metadata{APIVersion: "v2", Name: "block", Version: "0.1.0"},
		Templates: []*common.File{{
			Name: "templates/configmap.yaml",
			Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: page\ndata:\n  index.html: |\n    <p>{{ .Values.message }}</p>"),
		}},
	}
	rendered, err := Render(context.Background(), &Loaded{Chart: ch, Version: "0.1.0"}, map[string]any{"message": "hello"}, RenderOptions{ReleaseName: "web", Namespace: "review-x"})
	if err != nil {
		t.Fatal(err)
	}
	applied, err := manifest.SplitDocuments(rendered.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rendered.Objects, applied) {
		t.Fatalf("planned objects %v differ from the manifest Helm applies %v", rendered.Objects, applied)
	}
	data := rendered.Objects[0]["data"].(map[string]any)
	if got := data["index.html"]; got != "<p>hello</p>\n" {
		t.Fatalf("index.html = %q, want the block scalar's final newline kept", got)
	}
}
