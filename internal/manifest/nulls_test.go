package manifest

import (
	"reflect"
	"testing"
)

func TestNullFields(t *testing.T) {
	obj := Object{
		"apiVersion": "v1",
		"kind":       "PersistentVolumeClaim",
		"metadata": map[string]any{
			"name":              "data",
			"creationTimestamp": nil,
			"annotations":       map[string]any{"example.com/a.b": nil, "kept": "x"},
		},
		"spec": map[string]any{
			"storageClassName": nil,
			"accessModes":      []any{"ReadWriteOnce"},
			"template": map[string]any{
				"metadata": map[string]any{"creationTimestamp": nil, "labels": nil},
			},
			"containers": []any{map[string]any{"name": "app", "resources": nil}, nil},
		},
		"status": map[string]any{"phase": nil},
	}
	want := []string{
		`.metadata.annotations["example.com/a.b"]`,
		".spec.containers[0].resources",
		".spec.storageClassName",
		".spec.template.metadata.labels",
	}
	if got := NullFields(obj); !reflect.DeepEqual(got, want) {
		t.Errorf("NullFields =\n%q\nwant\n%q", got, want)
	}
	if got := NullFields(Object{"kind": "ConfigMap", "data": map[string]any{"a": "b"}}); got != nil {
		t.Errorf("NullFields of an object without null = %q, want none", got)
	}
}
