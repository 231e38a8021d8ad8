package manifest

import (
	"fmt"
	"reflect"
	"strings"
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
	forgetWritten(t)
	var writes atomic.Int32
	written.write = func(obj Object) (string, error) { writes.Add(1); return Render(obj) }
	objs, err := SplitDocuments(generateHelmOutput(100))
	if err != nil {
		t.Fatal(err)
	}
	r := NewRedactor(generatedSensitive, []byte("a release's redaction key"), nil)
	first, err := r.Manifests(objs, "review-x", nil)
	if err != nil {
		t.Fatal(err)
	}
	objs[7]["metadata"].(map[string]any)["labels"] = map[string]any{"changed": "yes"}
	second, err := r.Manifests(objs, "review-x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if writes.Load() != 101 {
		t.Errorf("%d objects written for 100 objects and one changed, want 101", writes.Load())
	}
	changed := 0
	for key, text := range second {
		if first[key] != text {
			changed++
		}
	}
	if changed != 1 {
		t.Errorf("%d manifests differ after one object changed, want 1", changed)
	}
}

// forgetParsed gives the test a memory of parsed documents of its own, empty, counting the
// documents it parses.
func forgetParsed(t *testing.T) *atomic.Int32 {
	t.Helper()
	before := parsed
	var reads atomic.Int32
	parsed = newValueMemo(1<<14, func(doc rawDocument) (any, error) { reads.Add(1); return parseDocument(doc) })
	t.Cleanup(func() { parsed = before })
	return &reads
}

func TestValueMemo_parsesEachTextOnce(t *testing.T) {
	reads := forgetParsed(t)
	parse := func(text string) any {
		t.Helper()
		value, err := parsed.parse(rawDocument{index: 1, line: 1, text: text})
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		return value
	}
	first := parse("# Source: chart/templates/a.yaml\nkind: A\nmetadata:\n  name: a\n")
	first.(map[string]any)["metadata"].(map[string]any)["name"] = "changed by a caller"
	// The same text as a template renders it, without Helm's "# Source:" line: not parsed again,
	// and what the first caller changed is not there.
	second := parse("kind: A\nmetadata:\n  name: a\n")
	if got := second.(map[string]any)["metadata"].(map[string]any)["name"]; got != "a" {
		t.Errorf("name %v, want a: a caller's change reached the memory", got)
	}
	// What comes from memory is a copy too.
	second.(map[string]any)["metadata"].(map[string]any)["name"] = "changed again"
	third := parse("kind: A\nmetadata:\n  name: a\n")
	if got := third.(map[string]any)["metadata"].(map[string]any)["name"]; got != "a" {
		t.Errorf("name %v, want a: a change to what came from memory reached the memory", got)
	}
	if reads.Load() != 1 {
		t.Errorf("%d parses of one text, want 1", reads.Load())
	}
	// Trailing blank lines are content to a "|+" block scalar: another text, another value.
	kept := parse("data: |+\n  x\n\n")
	clipped := parse("data: |+\n  x\n")
	if kept.(map[string]any)["data"] != "x\n\n" || clipped.(map[string]any)["data"] != "x\n" {
		t.Errorf("block scalars %q and %q, want \"x\\n\\n\" and \"x\\n\"", kept.(map[string]any)["data"], clipped.(map[string]any)["data"])
	}
	// A document that does not parse is parsed again each time: its error names its place.
	for range 2 {
		if _, err := parsed.parse(rawDocument{index: 3, line: 9, text: "a: [b\n"}); err == nil {
			t.Fatal("a broken document parsed")
		}
	}
	if reads.Load() != 5 {
		t.Errorf("%d parses, want 5: one for the first text, two block scalars, a broken document twice", reads.Load())
	}
}

func TestSplitRemembered_theNextRenderingParsesOnlyWhatChanged(t *testing.T) {
	reads := forgetParsed(t)
	stream := generateHelmOutput(100)
	// A rendering's documents, as the chart package parses them: one template's text at a
	// time, without the "# Source:" lines of a release manifest.
	render := func(change bool) ([]Object, string) {
		t.Helper()
		var objs []Object
		var texts []string
		for i, doc := range splitYAMLStream(stream) {
			text := parsedText(doc.text)
			if change && i == 7 {
				text = strings.Replace(text, "metadata:\n", "metadata:\n  labels: {changed: \"yes\"}\n", 1)
			}
			parsed, err := SplitRemembered(text)
			if err != nil {
				t.Fatal(err)
			}
			objs, texts = append(objs, parsed...), append(texts, text)
		}
		return objs, strings.Join(texts, "---\n")
	}
	first, _ := render(false)
	parses := reads.Load()
	if parses < 100 {
		t.Fatalf("%d parses of a 100-object rendering", parses)
	}
	first[0]["metadata"].(map[string]any)["name"] = "changed by a caller"
	next, nextText := render(true)
	if reads.Load() != parses+1 {
		t.Errorf("%d documents parsed again for one changed, want 1", reads.Load()-parses)
	}
	fresh, err := SplitDocuments(nextText)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SplitDocuments("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: not-rendered}\n"); err != nil {
		t.Fatal(err)
	}
	if reads.Load() != parses+1 {
		t.Error("SplitDocuments went through the memory of renderings")
	}
	if !reflect.DeepEqual(next, fresh) {
		t.Error("the documents from memory differ from the same documents parsed afresh")
	}
	if next[7]["metadata"].(map[string]any)["labels"].(map[string]any)["changed"] != "yes" {
		t.Errorf("the changed document is %v", next[7]["metadata"])
	}
}
