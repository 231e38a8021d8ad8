package readiness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// fixture reads testdata/<name>: a mapping with the objects of a release
// and the pods of its namespace, as a watch would see them.
func fixture(t testing.TB, name string) (objects, pods []*unstructured.Unstructured) {
	t.Helper()
	in := fixtureInput(t, name)
	return in.Objects, in.Pods
}

// fixtureInput reads testdata/<name> with its events too.
func fixtureInput(t testing.TB, name string) Input {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	jsonData, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var doc struct {
		Objects []map[string]any `json:"objects"`
		Pods    []map[string]any `json:"pods"`
		Events  []map[string]any `json:"events"`
	}
	// Integers as int64, as client-go decodes them.
	if err := utiljson.Unmarshal(jsonData, &doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var in Input
	for _, obj := range doc.Objects {
		in.Objects = append(in.Objects, &unstructured.Unstructured{Object: obj})
	}
	for _, pod := range doc.Pods {
		in.Pods = append(in.Pods, &unstructured.Unstructured{Object: pod})
	}
	for _, e := range doc.Events {
		in.Events = append(in.Events, &unstructured.Unstructured{Object: e})
	}
	return in
}

type wantFailure struct {
	object, reason string
	message        []string // substrings
}

func checkFailures(t *testing.T, got []Failure, want []wantFailure) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("failures = %v, want %d", got, len(want))
	}
	for i, w := range want {
		if got[i].Object != w.object || got[i].Reason != w.reason {
			t.Errorf("failure %d = %s/%s, want %s/%s", i, got[i].Object, got[i].Reason, w.object, w.reason)
		}
		for _, part := range w.message {
			if !strings.Contains(got[i].Message, part) {
				t.Errorf("failure %d message %q does not contain %q", i, got[i].Message, part)
			}
		}
	}
}
