package manifest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"strings"
)

// RedactionKeyLength is the length in bytes of a release's redaction key.
const RedactionKeyLength = 32

// RedactionRecord is what a release keeps, out of every plan, to redact its next plans as it redacted
// the last one: the key its markers are HMACs with, and a keyed digest of each object the last
// apply applied (see [Redactor.ObjectDigests]), by manifest key.
//
// Conservative says that the manifests were written without knowing which inputs are
// sensitive (an imported release), hiding whatever the chart derives from any of its values,
// and Digests are of the objects Helm recorded: see [KeepConservative].
type RedactionRecord struct {
	Key          []byte            `json:"key"`
	Digests      map[string]string `json:"digests,omitempty"`
	Conservative bool              `json:"conservative,omitempty"`
}

// NewRedactionKey returns a new random key for a release's markers.
func NewRedactionKey() ([]byte, error) {
	key := make([]byte, RedactionKeyLength)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("draw a redaction key: %w", err)
	}
	return key, nil
}

// ParseRedactionRecord decodes what [RedactionRecord.Encode] wrote. Nothing (no data) is a RedactionRecord
// without a key. A key of another length is refused, so a damaged entry is never used.
func ParseRedactionRecord(data []byte) (RedactionRecord, error) {
	var out RedactionRecord
	if len(data) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return RedactionRecord{}, fmt.Errorf("decode the redaction record: %w", err)
	}
	if len(out.Key) != RedactionKeyLength {
		return RedactionRecord{}, fmt.Errorf("decode the redaction record: the key has %d bytes, not %d", len(out.Key), RedactionKeyLength)
	}
	return out, nil
}

// Encode returns r as JSON (the key in base64).
func (r RedactionRecord) Encode() ([]byte, error) {
	return json.Marshal(r)
}

// anyMarker matches every marker a Redactor writes, keyed or not.
var anyMarker = regexp.MustCompile(`\(sensitive value(?: hmac:[0-9a-f]{12})?\)`)

// numberedMarker matches every marker, with the number that tells apart keys hidden alike.
var numberedMarker = regexp.MustCompile(anyMarker.String() + `(?: \(\d+\))?`)

// unkeyedMarker matches the marker written without a key.
var unkeyedMarker = regexp.MustCompile(`^\(sensitive value\)$`)

// SameExceptUnkeyedMarkers reports whether old, a manifest written earlier, is shown, a manifest
// of the same object now, apart from markers old wrote without a key: every other character is
// the same, and each marker of old is either the marker of shown at its place or unkeyed. A
// keyed marker that differs is a changed value, and so not the same.
func SameExceptUnkeyedMarkers(old, shown string) bool {
	if old == shown {
		return true
	}
	oldMarkers, shownMarkers := anyMarker.FindAllStringIndex(old, -1), anyMarker.FindAllStringIndex(shown, -1)
	if len(oldMarkers) != len(shownMarkers) || len(oldMarkers) == 0 {
		return false
	}
	oldAt, shownAt := 0, 0
	for i, o := range oldMarkers {
		s := shownMarkers[i]
		if old[oldAt:o[0]] != shown[shownAt:s[0]] {
			return false
		}
		oldMarker, shownMarker := old[o[0]:o[1]], shown[s[0]:s[1]]
		if oldMarker != shownMarker && !unkeyedMarker.MatchString(oldMarker) {
			return false
		}
		oldAt, shownAt = o[1], s[1]
	}
	return old[oldAt:] == shown[shownAt:]
}

// KeepUnchanged returns shown, the manifests of a rendering, with the manifest old holds kept
// for each object that did not change since old was written, so that markers written before
// the release had its key (the first plan's) show no change until the object changes: an
// object with a digest recorded (recorded, by the last apply) is unchanged when its digest now
// (digests) is the same and old differs from shown only in unkeyed markers
// ([SameExceptUnkeyedMarkers]). Neither shown nor old is changed.
func KeepUnchanged(shown, old, digests, recorded map[string]string) map[string]string {
	out := maps.Clone(shown)
	for k, now := range shown {
		before, ok := old[k]
		if !ok || before == now {
			continue
		}
		if digest, ok := recorded[k]; ok && digest == digests[k] && SameExceptUnkeyedMarkers(before, now) {
			out[k] = before
		}
	}
	return out
}

// KeepConservative returns old, manifests written conservatively (see [RedactionRecord]), when
// shown, the manifests of a rendering, hold the same objects and each is unchanged: its digest
// now (digests) is the one recorded and old is shown where old shows no marker
// ([SameExceptMarkers]). Otherwise it returns shown whole, so the first change writes every
// manifest as the rendering redacts it. Neither shown nor old is changed.
func KeepConservative(shown, old, digests, recorded map[string]string) map[string]string {
	if len(shown) != len(old) {
		return maps.Clone(shown)
	}
	for k, now := range shown {
		before, ok := old[k]
		if !ok || recorded[k] == "" || recorded[k] != digests[k] || !SameExceptMarkers(before, now) {
			return maps.Clone(shown)
		}
	}
	return maps.Clone(old)
}

// SameExceptMarkers reports whether shown is old with each marker of old standing for any
// text, markers included: what old shows outside its markers, shown shows alike.
func SameExceptMarkers(old, shown string) bool {
	if old == shown {
		return true
	}
	markers := numberedMarker.FindAllStringIndex(old, -1)
	if len(markers) == 0 {
		return false
	}
	var pattern strings.Builder
	pattern.WriteString(`(?s)^`)
	at := 0
	for _, m := range markers {
		pattern.WriteString(regexp.QuoteMeta(old[at:m[0]]))
		pattern.WriteString(`.*?`)
		at = m[1]
	}
	pattern.WriteString(regexp.QuoteMeta(old[at:]) + `$`)
	re, err := regexp.Compile(pattern.String())
	return err == nil && re.MatchString(shown)
}
