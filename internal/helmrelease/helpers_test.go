package helmrelease

import (
	"context"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// fakeReader serves objects and pods from memory; step advances the cluster's state on each
// poll, as controllers would.
type fakeReader struct {
	mu      sync.Mutex
	objects map[string]*unstructured.Unstructured // by name
	pods    []*unstructured.Unstructured
	events  []*unstructured.Unstructured
	gets    int
	// eventLists counts ListEvents calls by namespace.
	eventLists map[string]int
	step       func(f *fakeReader)
}

func (f *fakeReader) Get(_ context.Context, ref objectRef) (*unstructured.Unstructured, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	if f.step != nil && f.gets%2 == 1 {
		f.step(f)
	}
	obj := f.objects[ref.Name]
	if obj == nil {
		return nil, nil
	}
	return obj.DeepCopy(), nil
}

func (f *fakeReader) ListPods(context.Context, string) ([]*unstructured.Unstructured, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pods, nil
}

func (f *fakeReader) ListEvents(_ context.Context, namespace string) ([]*unstructured.Unstructured, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.eventLists == nil {
		f.eventLists = map[string]int{}
	}
	f.eventLists[namespace]++
	return f.events, nil
}

func object(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	// Through JSON, so numbers are int64 as the API server's are.
	data, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return obj
}
