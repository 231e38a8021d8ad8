package manifest

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"maps"
	"slices"
)

// TextRecord lets a later process take the text of an object from a state's manifests instead
// of writing it anew: for each manifest, by key, the digest of the content of the object that
// was written as its text. A process that meets an object of that content again (a refresh
// reading an unchanged live object, a plan rendering an unchanged one) then gives it that text
// without writing it. A record is taken only by the build that made it (Writer: another build
// might write the same content otherwise), and only for exactly the manifests it was made of
// (Texts), so a state whose texts were changed since is written anew.
type TextRecord struct {
	// Writer names the build that wrote the texts.
	Writer string
	// Texts is the digest of the manifests, each key and its text, in the keys' order.
	Texts [sha256.Size]byte
	// Digests are the content digests of the manifests' objects, in the keys' order; a zero
	// digest is a text the process that made the record did not write.
	Digests [][sha256.Size]byte
}

// RecordWritten returns the record of manifests, by key, as writer (this process's build)
// wrote them; ok is false when this process wrote none of them, or writer is empty.
func RecordWritten(manifests map[string]string, writer string) (rec TextRecord, ok bool) {
	return written.record(manifests, writer)
}

// RememberWritten takes the texts of manifests as written in this process, by rec, the record
// [RecordWritten] made of them: an object of the content a digest of rec names is given that
// text without being written. It returns how many texts it took: none unless rec was made by
// writer, for exactly these manifests.
func RememberWritten(manifests map[string]string, rec TextRecord, writer string) int {
	return written.rememberRecord(manifests, rec, writer)
}

func (m *textMemo) record(manifests map[string]string, writer string) (TextRecord, bool) {
	if writer == "" || len(manifests) == 0 {
		return TextRecord{}, false
	}
	keys := slices.Sorted(maps.Keys(manifests))
	rec := TextRecord{Writer: writer, Texts: textsDigest(keys, manifests), Digests: make([][sha256.Size]byte, len(keys))}
	known := false
	for i, key := range keys {
		if digest, ok := m.digests.get(manifests[key]); ok {
			rec.Digests[i], known = digest, true
		}
	}
	return rec, known
}

func (m *textMemo) rememberRecord(manifests map[string]string, rec TextRecord, writer string) int {
	if writer == "" || rec.Writer != writer || len(rec.Digests) != len(manifests) {
		return 0
	}
	keys := slices.Sorted(maps.Keys(manifests))
	if textsDigest(keys, manifests) != rec.Texts {
		return 0
	}
	m.records.Add(1)
	taken := 0
	for i, key := range keys {
		if rec.Digests[i] != ([sha256.Size]byte{}) {
			m.remember(rec.Digests[i], manifests[key])
			taken++
		}
	}
	return taken
}

// textsDigest is the SHA-256 of each key of manifests, in keys' order, and its text, each
// preceded by its length (appendString's encoding).
func textsDigest(keys []string, manifests map[string]string) [sha256.Size]byte {
	h := sha256.New()
	var buf []byte
	for _, key := range keys {
		buf = appendString(buf[:0], key)
		h.Write(buf)
		buf = appendString(buf[:0], manifests[key])
		h.Write(buf)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// textRecordJSON is a TextRecord as JSON: the digests one after another.
type textRecordJSON struct {
	Writer  string `json:"writer"`
	Texts   []byte `json:"texts"`
	Digests []byte `json:"digests"`
}

// MarshalJSON encodes the record for a state.
func (r TextRecord) MarshalJSON() ([]byte, error) {
	enc := textRecordJSON{Writer: r.Writer, Texts: r.Texts[:], Digests: make([]byte, 0, len(r.Digests)*sha256.Size)}
	for _, d := range r.Digests {
		enc.Digests = append(enc.Digests, d[:]...)
	}
	return json.Marshal(enc)
}

// UnmarshalJSON decodes a record MarshalJSON encoded.
func (r *TextRecord) UnmarshalJSON(data []byte) error {
	var enc textRecordJSON
	if err := json.Unmarshal(data, &enc); err != nil {
		return err
	}
	if len(enc.Texts) != sha256.Size || len(enc.Digests)%sha256.Size != 0 {
		return errors.New("a text record's digests are not SHA-256 digests")
	}
	out := TextRecord{Writer: enc.Writer, Digests: make([][sha256.Size]byte, len(enc.Digests)/sha256.Size)}
	copy(out.Texts[:], enc.Texts)
	for i := range out.Digests {
		copy(out.Digests[i][:], enc.Digests[i*sha256.Size:])
	}
	*r = out
	return nil
}
