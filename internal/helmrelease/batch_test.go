package helmrelease

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// listingReader serves objects by resource and name and counts the requests it gets.
type listingReader struct {
	objects     map[string]*unstructured.Unstructured // resource/name
	gets, lists int
}

func (r *listingReader) Get(_ context.Context, ref objectRef) (*unstructured.Unstructured, error) {
	r.gets++
	return r.objects[ref.Resource.Resource+"/"+ref.Name], nil
}

func (r *listingReader) ListPods(context.Context, string) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

func (r *listingReader) List(_ context.Context, resource schema.GroupVersionResource, _ string) (map[string]*unstructured.Unstructured, error) {
	r.lists++
	out := map[string]*unstructured.Unstructured{}
	for key, obj := range r.objects {
		if key[:len(resource.Resource)+1] == resource.Resource+"/" {
			out[obj.GetName()] = obj
		}
	}
	return out, nil
}

func TestGetAll_listsKindsWithManyObjectsAndGetsTheRest(t *testing.T) {
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	reader := &listingReader{objects: map[string]*unstructured.Unstructured{}}
	var refs []objectRef
	for i := range 5 {
		name := fmt.Sprintf("cm-%d", i)
		if i != 3 { // cm-3 does not exist
			obj := &unstructured.Unstructured{}
			obj.SetName(name)
			reader.objects["configmaps/"+name] = obj
		}
		refs = append(refs, objectRef{Resource: configMaps, Kind: "ConfigMap", Namespace: "review", Name: name})
	}
	web := &unstructured.Unstructured{}
	web.SetName("web")
	reader.objects["deployments/web"] = web
	refs = append(refs, objectRef{Resource: deployments, Kind: "Deployment", Namespace: "review", Name: "web"})

	got, err := getAll(context.Background(), reader, refs)
	if err != nil {
		t.Fatal(err)
	}
	if reader.lists != 1 || reader.gets != 1 {
		t.Fatalf("made %d lists and %d gets, want 1 list for the ConfigMaps and 1 get for the Deployment", reader.lists, reader.gets)
	}
	for i, ref := range refs {
		if ref.Name == "cm-3" {
			if got[i] != nil {
				t.Errorf("cm-3 does not exist but was returned")
			}
			continue
		}
		if got[i] == nil || got[i].GetName() != ref.Name {
			t.Errorf("entry %d = %v, want %s", i, got[i], ref.Name)
		}
	}
}
