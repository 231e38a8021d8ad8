package manifest

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// forgetWritten gives the test a memory of written texts of its own, empty.
func forgetWritten(t *testing.T) {
	t.Helper()
	before := written
	written = newTextMemo(1<<14, Render)
	t.Cleanup(func() { written = before })
}

func TestContentDigest_tellsApartWhatIsWrittenApart(t *testing.T) {
	apart := []struct {
		name string
		a, b any
	}{
		{"an integer and a float of the same value", int64(10000000000000000), float64(1e16)},
		{"a string and a number", "1", int64(1)},
		{"null and an empty string", nil, ""},
		{"true and a string", true, "true"},
		{"a mapping and a list", map[string]any{"a": "b"}, []any{"a", "b"}},
		{"where a key ends", map[string]any{"a": "sc"}, map[string]any{"as": "c"}},
		{"nested or flat", map[string]any{"a": map[string]any{"b": "c"}}, map[string]any{"a": "b", "c": nil}},
		{"list items", []any{"a", []any{"b"}}, []any{[]any{"a"}, "b"}},
	}
	for _, tt := range apart {
		a, okA := contentDigest(Object{"v": tt.a})
		b, okB := contentDigest(Object{"v": tt.b})
		if !okA || !okB || a == b {
			t.Errorf("%s: digests equal (or not taken: %t, %t)", tt.name, okA, okB)
		}
	}
	alike := []struct {
		name string
		a, b Object
	}{
		{"keys in another order", Object{"a": int64(1), "b": "x", "c": []any{nil}}, Object{"c": []any{nil}, "b": "x", "a": int64(1)}},
		{"int and int64", Object{"n": 3}, Object{"n": int64(3)}},
	}
	for _, tt := range alike {
		a, _ := contentDigest(tt.a)
		b, _ := contentDigest(tt.b)
		if a != b {
			t.Errorf("%s: digests differ", tt.name)
		}
		textA, _ := Render(tt.a)
		textB, _ := Render(tt.b)
		if textA != textB {
			t.Errorf("%s: written apart, %q and %q, yet one digest", tt.name, textA, textB)
		}
	}
	if _, ok := contentDigest(Object{"v": struct{}{}}); ok {
		t.Error("a value that is no plain JSON value was digested")
	}
}

func TestTextMemo_writesEachContentOnce(t *testing.T) {
	writes := 0
	m := newTextMemo(3, func(obj Object) (string, error) { writes++; return Render(obj) })
	obj := func(i int) Object {
		return Object{"kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprint(i)}}
	}
	for range 2 {
		for i := range 3 {
			text, err := m.render(obj(i))
			if want, _ := Render(obj(i)); err != nil || text != want {
				t.Fatalf("object %d: %q, %v; want %q", i, text, err, want)
			}
		}
	}
	if writes != 3 {
		t.Errorf("%d writes for 3 objects written twice, want 3", writes)
	}
	// A fourth content fills the memory: it starts again with that one alone.
	if _, err := m.render(obj(3)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.render(obj(0)); err != nil {
		t.Fatal(err)
	}
	if writes != 5 {
		t.Errorf("%d writes, want 5: a full memory starts again", writes)
	}
	if _, err := m.render(Object{"v": struct{}{}}); err != nil || writes != 6 {
		t.Errorf("an object that cannot be digested: err %v, %d writes, want it written (6)", err, writes)
	}
}

func TestManifests_aRefreshThenAPlanWriteEachObjectOnce(t *testing.T) {
	first, objs, writes := writtenRelease(t)
	second := writeOneChanged(t, objs)
	if writes.Load() != 101 {
		t.Errorf("%d objects written for 100 objects and one changed, want 101", writes.Load())
	}
	if changed := changedKeys(first, second); len(changed) != 1 {
		t.Errorf("manifests %v differ after one object changed, want 1", changed)
	}
}

// writtenRelease writes 100 objects of a release as a refresh does, in a memory of the test's
// own, and returns its manifests, its objects and the memory's count of writes.
func writtenRelease(t *testing.T) (map[string]string, []Object, *atomic.Int32) {
	t.Helper()
	forgetWritten(t)
	var writes atomic.Int32
	written.write = func(obj Object) (string, error) { writes.Add(1); return Render(obj) }
	objs, err := SplitDocuments(generateHelmOutput(100))
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := releaseRedactor().Manifests(objs, "review-x", nil)
	if err != nil {
		t.Fatal(err)
	}
	return manifests, objs, &writes
}

// writeOneChanged changes one of objs, the objects of writtenRelease, and writes them again.
func writeOneChanged(t *testing.T, objs []Object) map[string]string {
	t.Helper()
	objs[7]["metadata"].(map[string]any)["labels"] = map[string]any{"changed": "yes"}
	manifests, err := releaseRedactor().Manifests(objs, "review-x", nil)
	if err != nil {
		t.Fatal(err)
	}
	return manifests
}

// releaseRedactor is the redactor of the release writtenRelease writes.
func releaseRedactor() *Redactor {
	return NewRedactor(generatedSensitive, []byte("a release's redaction key"), nil)
}

// changedKeys returns the keys of after whose texts differ from before's.
func changedKeys(before, after map[string]string) []string {
	var changed []string
	for key, text := range after {
		if before[key] != text {
			changed = append(changed, key)
		}
	}
	return changed
}
