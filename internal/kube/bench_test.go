package kube

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// BenchmarkOwnedFields measures the drift check of one environment object: reading the fields
// our manager owns out of the live object, as every refresh of an environment does per object.
func BenchmarkOwnedFields(b *testing.B) {
	data, err := yamlFixture("testdata/resourcequota-edited.yaml")
	if err != nil {
		b.Fatal(err)
	}
	intended := map[string]any{
		"apiVersion": "v1", "kind": "ResourceQuota",
		"metadata": map[string]any{
			"name": "gitlabk8s-environment", "namespace": "review-x",
			"labels": map[string]any{"app.kubernetes.io/managed-by": "gitlabk8s"},
		},
		"spec": map[string]any{"hard": map[string]any{"pods": "10", "requests.cpu": "1"}},
	}
	b.ReportAllocs()
	for b.Loop() {
		live := &unstructured.Unstructured{Object: data}
		if _, err := OwnedFields(live, intended); err != nil {
			b.Fatal(err)
		}
	}
}

func yamlFixture(file string) (map[string]any, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	obj := map[string]any{}
	return obj, yaml.Unmarshal(raw, &obj)
}
