package kube

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

func loadObject(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{}
	if err := yaml.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

func render(t *testing.T, obj map[string]any) string {
	t.Helper()
	text, err := manifest.Render(manifest.Normalize(obj, "review-x", true))
	if err != nil {
		t.Fatal(err)
	}
	return text
}

func TestOwnedFields_showsOurFieldsAndDriftInThemOnly(t *testing.T) {
	live := loadObject(t, "testdata/resourcequota-edited.yaml")
	intended := map[string]any{
		"apiVersion": "v1", "kind": "ResourceQuota",
		"metadata": map[string]any{
			"name": "gitlabk8s-environment", "namespace": "review-x",
			"labels":      map[string]any{"app.kubernetes.io/managed-by": "gitlabk8s"},
			"annotations": map[string]any{"gitlabk8s.io/environment": "review/x"},
		},
		"spec": map[string]any{"hard": map[string]any{"pods": "10", "requests.cpu": "1"}},
	}
	tests := []struct {
		desc     string
		intended map[string]any
		want     string
	}{
		{
			// pods was taken over by kubectl edit: with the intended object
			// its edited value shows, so the plan shows exactly that line.
			desc: "with the intended object", intended: intended,
			want: `apiVersion: v1
kind: ResourceQuota
metadata:
  annotations:
    gitlabk8s.io/environment: review/x
  labels:
    app.kubernetes.io/managed-by: gitlabk8s
  name: gitlabk8s-environment
  namespace: review-x
spec:
  hard:
    pods: "20"
    requests.cpu: "1"
`,
		},
		{
			desc: "managed fields alone", intended: nil,
			want: `apiVersion: v1
kind: ResourceQuota
metadata:
  annotations:
    gitlabk8s.io/environment: review/x
  labels:
    app.kubernetes.io/managed-by: gitlabk8s
  name: gitlabk8s-environment
  namespace: review-x
spec:
  hard:
    requests.cpu: "1"
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			owned, err := OwnedFields(live, tt.intended)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(t, owned); got != tt.want {
				t.Errorf("OwnedFields rendered\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestOwnedFields_customResourcesUseADeducedSchema(t *testing.T) {
	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "review-x"},
		"spec":     map[string]any{"size": int64(3), "color": "red", "parts": []any{"a", "b"}},
	}}
	intended := map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "review-x"},
		"spec":     map[string]any{"size": int64(2), "parts": []any{"a"}},
	}
	owned, err := OwnedFields(live, intended)
	if err != nil {
		t.Fatal(err)
	}
	want := "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: review-x\nspec:\n  parts:\n  - a\n  - b\n  size: 3\n"
	if got := render(t, owned); got != want {
		t.Errorf("OwnedFields rendered\n%s\nwant\n%s", got, want)
	}
}
