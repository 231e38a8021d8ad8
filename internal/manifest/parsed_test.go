package manifest

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// forgetParsed gives the test a memory of parsed documents of its own, whose parses it counts.
func forgetParsed(t *testing.T) *atomic.Int32 {
	t.Helper()
	before := parsed
	var parses atomic.Int32
	parsed = newParseMemo(1<<14, 64<<20, func(text []byte) (any, error) { parses.Add(1); return parseYAMLValue(text) })
	t.Cleanup(func() { parsed = before })
	return &parses
}

func TestSplitDocuments_parsesEachDocumentOnce(t *testing.T) {
	parses := forgetParsed(t)
	stream := generateHelmOutput(100)
	first, err := SplitDocuments(stream)
	if err != nil {
		t.Fatal(err)
	}
	// As the plan renders the next revision: the same documents, one changed.
	docs := strings.Split(stream, "---\n")
	docs[8] = strings.Replace(docs[8], "  name: ", "  name: changed-", 1)
	second, err := SplitDocuments(strings.Join(docs, "---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := parses.Load(); got != 101 {
		t.Errorf("%d documents parsed for 100 documents read twice and one changed, want 101", got)
	}
	if len(second) != 100 || len(first) != 100 {
		t.Fatalf("%d and %d objects, want 100 of each", len(first), len(second))
	}
	for i := range first {
		if i == 7 {
			if name, _ := second[i]["metadata"].(map[string]any)["name"].(string); !strings.HasPrefix(name, "changed-") {
				t.Errorf("the changed document read as the one before it changed: name %v", name)
			}
			continue
		}
		if diff := cmp.Diff(first[i], second[i]); diff != "" {
			t.Errorf("object %d read from memory differs (-parsed +remembered):\n%s", i, diff)
		}
	}
}

// A line that changes nothing of a document's value may still make it fail to parse: the
// memory is of whole texts.
func TestParseMemo_readsNoOtherTextAsRemembered(t *testing.T) {
	m := newParseMemo(1<<14, 64<<20, parseYAMLValue)
	if _, err := m.value("kind: X\n"); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"\t# a comment after a tab\nkind: X\n", "# a control character \x01\nkind: X\n"} {
		if value, err := m.value(text); err == nil {
			t.Errorf("%q read as %v, want the parser's error", text, value)
		}
	}
}

func TestParseMemo_handsEachCallerACopy(t *testing.T) {
	m := newParseMemo(1<<14, 64<<20, parseYAMLValue)
	const doc = "kind: ConfigMapList\nitems:\n- metadata: {name: a}\n  data: {k: v}\n"
	first, err := m.value(doc)
	if err != nil {
		t.Fatal(err)
	}
	// What a caller does to its objects: splitting fills in the kind of a typed list's items.
	first.(map[string]any)["items"].([]any)[0].(map[string]any)["kind"] = "ConfigMap"
	first.(map[string]any)["items"].([]any)[0].(map[string]any)["data"].(map[string]any)["k"] = "changed"
	for range 2 {
		again, err := m.value(doc)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := parseYAMLValue([]byte(doc))
		if diff := cmp.Diff(want, again); diff != "" {
			t.Errorf("the document read again holds what an earlier caller changed (-parsed +read):\n%s", diff)
		}
		again.(map[string]any)["kind"] = "changed"
	}
}

func TestParseMemo_remembersNoError(t *testing.T) {
	parses := 0
	m := newParseMemo(2, 64<<20, func(text []byte) (any, error) {
		parses++
		if strings.Contains(string(text), "bad") {
			return nil, errors.New("bad document")
		}
		return parseYAMLValue(text)
	})
	for range 2 {
		if _, err := m.value("bad: [\n"); err == nil {
			t.Fatal("a document that does not parse read without an error")
		}
	}
	if parses != 2 {
		t.Errorf("%d parses of a failing document read twice, want 2: an error names lines of its own stream", parses)
	}
	// Two values fill the memory; a third starts it again with that one alone.
	for _, doc := range []string{"a: 1\n", "b: 1\n", "a: 1\n", "c: 1\n", "a: 1\n"} {
		if _, err := m.value(doc); err != nil {
			t.Fatal(err)
		}
	}
	if parses != 2+4 {
		t.Errorf("%d parses, want 6: a, b, c, and a again after the full memory started again", parses)
	}
}

func TestParseMemo_keepsAtMostItsBudgetOfText(t *testing.T) {
	parses := 0
	m := newParseMemo(1<<14, 12, func(text []byte) (any, error) { parses++; return parseYAMLValue(text) })
	// Two documents of 5 bytes fit a budget of 12; a third starts the memory again.
	for _, doc := range []string{"a: 1\n", "b: 1\n", "a: 1\n", "c: 1\n", "b: 1\n", "c: 1\n"} {
		if _, err := m.value(doc); err != nil {
			t.Fatal(err)
		}
	}
	if parses != 4 {
		t.Errorf("%d parses, want 4: a, b, c (which starts the memory again), b again", parses)
	}
}
