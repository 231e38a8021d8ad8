package manifest

import (
	"crypto/sha256"
	"encoding/binary"
	"maps"
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// written remembers the text [Render] gave objects in this process, by their content. A
// refresh writes the live objects of a release and the plan after it, in the same process,
// the rendering's: where nothing changed they are the same objects, and writing YAML is most of
// what [Redactor.Manifests] costs.
var written = newTextMemo(1<<14, Render)

// ForgetWritten empties the memory of written texts, for benchmarks that measure what a new
// process writes.
func ForgetWritten() {
	written.texts.forget()
	written.digests.forget()
}

// Written returns how many texts this process has written, for tests and benchmarks of
// what a process writes and what it takes from memory.
func Written() int64 { return written.count.Load() }

// RecordsTaken returns how many records of written texts (RememberWritten) this process has
// taken, for tests of how often a process reads them.
func RecordsTaken() int64 { return written.records.Load() }

// memory is a map for what a process works out more than once, safe for concurrent use. When
// it holds limit entries, or would hold more than budget bytes by size (when both are set), it
// starts again empty, so a long process (the acceptance tests') keeps at most that much.
type memory[K comparable, V any] struct {
	mu      sync.Mutex
	entries map[K]V
	limit   int
	budget  int
	size    func(K) int
	used    int
}

func (m *memory[K, V]) get(key K) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	value, ok := m.entries[key]
	return value, ok
}

func (m *memory[K, V]) put(key K, value V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	if m.size != nil {
		n = m.size(key)
	}
	if m.entries == nil || len(m.entries) >= m.limit || (m.size != nil && m.used+n > m.budget) {
		m.entries, m.used = make(map[K]V), 0
	}
	m.entries[key] = value
	m.used += n
}

func (m *memory[K, V]) forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries, m.used = nil, 0
}

// textMemo maps the content digest of objects ([contentDigest]) to their text, and each text
// back to the digest of the content it was written from, for the record a later process takes
// texts from (textrecord.go).
type textMemo struct {
	texts   memory[[sha256.Size]byte, string]
	digests memory[string, [sha256.Size]byte]
	write   func(Object) (string, error)
	// count is how many texts write gave; records, how many records rememberRecord took.
	count   atomic.Int64
	records atomic.Int64
}

func newTextMemo(limit int, write func(Object) (string, error)) *textMemo {
	return &textMemo{
		texts:   memory[[sha256.Size]byte, string]{limit: limit},
		digests: memory[string, [sha256.Size]byte]{limit: limit},
		write:   write,
	}
}

// remember takes text as what an object of content digest is written as.
func (m *textMemo) remember(digest [sha256.Size]byte, text string) {
	m.texts.put(digest, text)
	m.digests.put(text, digest)
}

// render returns Render(obj), from memory when an object of the same content was written.
func (m *textMemo) render(obj Object) (string, error) {
	digest, ok := contentDigest(obj)
	if !ok {
		return m.write(obj)
	}
	if text, ok := m.texts.get(digest); ok {
		return text, nil
	}
	text, err := m.write(obj)
	if err != nil {
		return "", err
	}
	m.count.Add(1)
	m.remember(digest, text)
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
