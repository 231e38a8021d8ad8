package helmrelease

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
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

// clusterNamespace creates, in the cluster kc reaches, a namespace named prefix and a unique
// suffix, deleted when the test ends.
func clusterNamespace(ctx context.Context, t *testing.T, kc kubernetes.Interface, prefix string) string {
	t.Helper()
	namespace := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kc.CoreV1().Namespaces().Delete(context.Background(), namespace, metav1.DeleteOptions{})
	})
	return namespace
}
