package manifest

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// parsed remembers the value each document text parsed to in this process. A plan renders
// the chart for the recorded revision and then for the next, and every document of the second
// that uses neither the revision nor the changed input is, to the byte, one of the first.
var parsed = newParseMemo(1<<14, 64<<20, parseYAMLValue)

// ForgetParsed empties the memory of parsed documents, for benchmarks that measure what a new
// process parses.
func ForgetParsed() { parsed.values.forget() }

// parseMemo maps a document's text to the value it parsed to: at most limit documents of
// budget bytes of text in all. The key is the whole text, as the parser read it: a line that
// changes nothing of the value (a comment) may still make the text fail to parse (a tab before
// it, a control character in it). Every caller gets a copy of its own: splitting fills in the
// items of typed lists, and the callers change the objects they are handed.
type parseMemo struct {
	values memory[string, any]
	parse  func([]byte) (any, error)
}

func newParseMemo(limit, budget int, parse func([]byte) (any, error)) *parseMemo {
	size := func(text string) int { return len(text) }
	return &parseMemo{values: memory[string, any]{limit: limit, budget: budget, size: size}, parse: parse}
}

// value returns what parse gives text, from memory when the same text was parsed before. A
// document that does not parse is not remembered: its error names lines of its own stream.
func (m *parseMemo) value(text string) (any, error) {
	if value, ok := m.values.get(text); ok {
		return runtime.DeepCopyJSONValue(value), nil
	}
	value, err := m.parse([]byte(text))
	if err != nil || value == nil {
		return value, err
	}
	// A copy of the key: text is part of a whole stream, which the memory would keep.
	m.values.put(strings.Clone(text), runtime.DeepCopyJSONValue(value))
	return value, nil
}
