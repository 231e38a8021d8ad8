package manifest

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// parsed remembers the value each document text parsed to in this process. A plan parses
// the same documents up to three times: the refresh reads the manifest Helm recorded, and the
// plan renders the chart for the recorded revision and then for the next, where every
// document that uses neither the revision nor the changed input comes out the same.
var parsed = newParseMemo(1<<14, 64<<20, parseYAMLValue)

// ForgetParsed empties the memory of parsed documents, for benchmarks that measure what a new
// process parses.
func ForgetParsed() { parsed.values.forget() }

// parseMemo maps a document's text, the comment lines before its content left out
// ([documentBody]), to the value it parsed to: at most limit documents of budget bytes of text
// in all. Every caller gets a copy of its own: splitting fills in the items of typed lists,
// and the callers change the objects they are handed.
type parseMemo struct {
	values memory[string, any]
	parse  func([]byte) (any, error)
}

func newParseMemo(limit, budget int, parse func([]byte) (any, error)) *parseMemo {
	size := func(body string) int { return len(body) }
	return &parseMemo{values: memory[string, any]{limit: limit, budget: budget, size: size}, parse: parse}
}

// value returns what parse gives text, from memory when a document of the same body was
// parsed before. A document that does not parse is not remembered: its error names lines of
// its own stream.
func (m *parseMemo) value(text string) (any, error) {
	body := documentBody(text)
	if value, ok := m.values.get(body); ok {
		return runtime.DeepCopyJSONValue(value), nil
	}
	value, err := m.parse([]byte(text))
	if err != nil || value == nil {
		return value, err
	}
	// A copy of the key: body is part of a whole stream, which the memory would keep.
	m.values.put(strings.Clone(body), runtime.DeepCopyJSONValue(value))
	return value, nil
}

// documentBody is text without the lines before its content that hold only a comment or
// whitespace, such as the "# Source:" line Helm writes before each document of a release's
// manifest: they do not change what the document parses to, so the rendering's document and
// the recorded one are the same body.
func documentBody(text string) string {
	for text != "" {
		line, rest, _ := strings.Cut(text, "\n")
		trimmed := strings.TrimSpace(line)
		if trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			return text
		}
		text = rest
	}
	return text
}
