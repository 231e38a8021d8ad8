package manifest

import (
	"crypto/sha256"
	"encoding/binary"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
)

// written remembers the text [Render] gave objects in this process, by their content. A
// refresh writes the live objects of a release and the plan after it, in the same process,
// the rendering's: where nothing changed they are the same objects, and writing YAML is most of
// what [Redactor.Manifests] costs.
var written = newTextMemo(1<<14, Render)

// parsed remembers what the documents of chart renderings parsed to in this process, by their
// text ([SplitRemembered]): a one-change plan renders the recorded revision and the next, whose
// documents are mostly the same texts, and parsing YAML is most of what a split costs.
var parsed = newValueMemo(1<<14, parseDocument)

// ForgetRemembered empties the memory of written texts and of parsed documents, for benchmarks
// that measure what a new process does.
func ForgetRemembered() {
	written.memory.Forget()
	parsed.memory.Forget()
}

// MemoryKey is the SHA-256 of what a [Memory] remembers a value by.
type MemoryKey = [sha256.Size]byte

// Memory maps digests to what was worked out from what they digest, for the process. When it
// holds limit values it starts again empty, so a long process (the acceptance tests') keeps at
// most that many. It is safe for concurrent use.
type Memory[V any] struct {
	mu     sync.Mutex
	values map[MemoryKey]V
	limit  int
}

// NewMemory returns an empty memory of at most limit values.
func NewMemory[V any](limit int) *Memory[V] {
	return &Memory[V]{limit: limit}
}

// Get returns the value remembered for digest.
func (m *Memory[V]) Get(digest MemoryKey) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	value, ok := m.values[digest]
	return value, ok
}

// Put remembers value for digest.
func (m *Memory[V]) Put(digest MemoryKey, value V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.values == nil || len(m.values) >= m.limit {
		m.values = make(map[MemoryKey]V)
	}
	m.values[digest] = value
}

// Forget empties the memory.
func (m *Memory[V]) Forget() {
	m.mu.Lock()
	m.values = nil
	m.mu.Unlock()
}

// valueMemo remembers the value a document's text parsed to, by the digest of the text with its
// leading comments left out ([parsedText]). It hands out copies only, so what a caller does to a
// value never reaches the next.
type valueMemo struct {
	memory *Memory[any]
	read   func(rawDocument) (any, error)
}

func newValueMemo(limit int, read func(rawDocument) (any, error)) *valueMemo {
	return &valueMemo{memory: NewMemory[any](limit), read: read}
}

// parse returns parseDocument(doc), from memory when a document of the same text parsed
// before. Errors are not remembered: they name the document's place in its stream.
func (m *valueMemo) parse(doc rawDocument) (any, error) {
	if isBlankDocument(doc.text) {
		return nil, nil
	}
	digest := sha256.Sum256([]byte(parsedText(doc.text)))
	if value, ok := m.memory.Get(digest); ok {
		return DeepCopy(value), nil
	}
	value, err := m.read(doc)
	if err != nil {
		return nil, err
	}
	m.memory.Put(digest, DeepCopy(value))
	return value, nil
}

// parsedText is the part of a document's text that decides what it parses to: the text
// without the comment and blank lines it starts with, such as the "# Source:" line Helm puts
// before each document of a release's manifest and not before the template's own text. Nothing
// else is left out: trailing blank lines are content to a "|+" block scalar.
func parsedText(text string) string {
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

// textMemo remembers the text of objects by their content digest ([contentDigest]).
type textMemo struct {
	memory *Memory[string]
	write  func(Object) (string, error)
}

func newTextMemo(limit int, write func(Object) (string, error)) *textMemo {
	return &textMemo{memory: NewMemory[string](limit), write: write}
}

// render returns Render(obj), from memory when an object of the same content was written.
func (m *textMemo) render(obj Object) (string, error) {
	digest, ok := contentDigest(obj)
	if !ok {
		return m.write(obj)
	}
	if text, ok := m.memory.Get(digest); ok {
		return text, nil
	}
	text, err := m.write(obj)
	if err != nil {
		return "", err
	}
	m.memory.Put(digest, text)
	return text, nil
}

// contentDigest is the SHA-256 of obj's content with the type of every scalar, mapping keys
// sorted: equal digests mean objects Render writes alike. Objects with values other than
// plain JSON ones are not digested (false).
func contentDigest(obj Object) ([sha256.Size]byte, bool) {
	buf, ok := appendContent(make([]byte, 0, 2048), obj)
	if !ok {
		return [sha256.Size]byte{}, false
	}
	return sha256.Sum256(buf), true
}

// appendContent appends an unambiguous encoding of value to buf: a tag for each type, lengths
// before strings, mappings and lists.
func appendContent(buf []byte, value any) ([]byte, bool) {
	switch v := value.(type) {
	case nil:
		return append(buf, 'n'), true
	case string:
		return appendString(append(buf, 's'), v), true
	case bool:
		if v {
			return append(buf, 't'), true
		}
		return append(buf, 'f'), true
	case int64:
		return binary.BigEndian.AppendUint64(append(buf, 'i'), uint64(v)), true
	case int:
		return binary.BigEndian.AppendUint64(append(buf, 'i'), uint64(int64(v))), true
	case int32:
		return binary.BigEndian.AppendUint64(append(buf, 'i'), uint64(int64(v))), true
	case float64:
		return binary.BigEndian.AppendUint64(append(buf, 'd'), math.Float64bits(v)), true
	case map[string]any:
		buf = binary.AppendUvarint(append(buf, 'm'), uint64(len(v)))
		for _, key := range slices.Sorted(maps.Keys(v)) {
			var ok bool
			if buf, ok = appendContent(appendString(buf, key), v[key]); !ok {
				return nil, false
			}
		}
		return buf, true
	case []any:
		buf = binary.AppendUvarint(append(buf, 'a'), uint64(len(v)))
		for _, elem := range v {
			var ok bool
			if buf, ok = appendContent(buf, elem); !ok {
				return nil, false
			}
		}
		return buf, true
	default:
		return nil, false
	}
}

func appendString(buf []byte, s string) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
}
