package manifest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

const (
	// redactedMarker replaces every occurrence of a sensitive value.
	redactedMarker = "(sensitive value)"

	// redactedPrefix starts every marker.
	redactedPrefix = "(sensitive value"

	// secretHashLength is how many hex characters of a marker's HMAC (or,
	// without a key, SHA-256) a marker shows: enough that a change is
	// visible.
	secretHashLength = 12

	// minHarvestedLength is the shortest Secret value that is also hidden
	// wherever else it occurs. Shorter values are ports, flags and
	// usernames ("5432", "true", "app"); hiding every occurrence of those
	// would make plans unreadable. Values given to NewRedactor are hidden
	// whatever their length.
	minHarvestedLength = 6
)

// HasMarker says whether s holds a redaction marker: some of its text was hidden.
func HasMarker(s string) bool { return strings.Contains(s, redactedPrefix) }

// base64Encodings are the encodings under which a sensitive value is also
// recognized. Raw encodings matter where the value ends a longer encoded
// string without padding.
var base64Encodings = []*base64.Encoding{
	base64.StdEncoding,
	base64.RawStdEncoding,
	base64.URLEncoding,
	base64.RawURLEncoding,
}

// Redactor hides sensitive values in objects and text. The zero value and a
// nil *Redactor hide only Secret data.
//
// RedactionRecord happens in three ways:
//
//   - Every value of a v1 Secret's data and stringData becomes
//     "(sensitive value hmac:<12 hex>)", an HMAC-SHA256 of the decoded value
//     keyed with the Redactor's key (see [NewRedactor]), so the same
//     value in data and stringData gets the same marker, a changed value
//     gets a new one, and without the key a marker cannot be used to test a
//     guess. A Redactor without a key, and a nil one, shows
//     "(sensitive value)" alone: an unkeyed hash would let anyone test
//     guesses against it.
//   - With a [Derived], every scalar and mapping key whose text a rendering
//     derived from a sensitive input becomes the same kind of marker of its
//     own text, whole.
//   - Every occurrence, in any string or mapping key of any object, of a
//     sensitive value, of a derived string (at least 4 bytes), or of their
//     base64 encodings (standard or URL alphabet, padded or not), JSON
//     escapes or Go quoting, becomes "(sensitive value)". Overlapping and
//     adjacent occurrences become one marker, so no part of a value is left
//     over. [Redactor.String] does this to error messages and log lines.
//
// A Redactor is safe for concurrent use.
type Redactor struct {
	values []string // sensitive values as given, without empty or repeated ones

	key     []byte   // keys the markers; without it they show no hash
	derived *Derived // scalars derived from sensitive inputs
	// inObjects hides values inside the strings of objects, when it is not r itself: with a
	// Derived, values shorter than minDerivedTextLength are left to it there.
	inObjects *Redactor

	shortest int                  // length of the shortest pattern, 0 for none
	single   [256]bool            // one-byte patterns
	pairs    [1 << 16 / 64]uint64 // bit set of the first two bytes of longer patterns
	byPrefix map[uint16][]string  // longer patterns by their first two bytes, longest first
}

// NewRedactor returns the Redactor that hides sensitive, what derived holds (nil for
// nothing), and their encodings, and whose markers are keyed with key (the release's
// redaction key, see [NewRedactionKey]). The same key and values give the same markers, so a
// plan made with the key a release keeps in its redaction record shows a marker change only
// where a value changed. Without a key (a plan made before the release has one, or a
// redactor for error messages alone) the markers are "(sensitive value)" alone. Empty values
// are ignored.
func NewRedactor(sensitive []string, key []byte, derived *Derived) *Redactor {
	r := literalRedactor(append(slices.Clone(sensitive), derived.texts()...))
	r.key, r.derived = slices.Clone(key), derived
	if derived != nil {
		long := slices.DeleteFunc(slices.Clone(r.values), func(v string) bool { return len(v) < minDerivedTextLength })
		r.inObjects = literalRedactor(long)
	}
	return r
}

// literalRedactor returns a Redactor without a key that hides the given values and their
// encodings.
func literalRedactor(sensitive []string) *Redactor {
	r := &Redactor{}
	for _, value := range sensitive {
		if value != "" && !slices.Contains(r.values, value) {
			r.values = append(r.values, value)
		}
	}
	r.compile()
	return r
}

// markerPattern matches the markers a Redactor writes, which the string scan leaves alone.
var markerPattern = regexp.MustCompile(`^\(sensitive value( hmac:[0-9a-f]{12})?\)( \(\d+\))?$`)

// objectString is String for the strings and keys of objects.
func (r *Redactor) objectString(s string) string {
	if r == nil || markerPattern.MatchString(s) {
		return s
	}
	if r.inObjects != nil {
		return r.inObjects.String(s)
	}
	return r.String(s)
}

// compile indexes every pattern by its first two bytes, so scanning a
// string costs one table lookup per byte and a prefix comparison only where
// a pattern may start.
func (r *Redactor) compile() {
	unique := map[string]bool{}
	for _, value := range r.values {
		for _, form := range textForms(value) {
			unique[form] = true
		}
	}
	patterns := make([]string, 0, len(unique))
	for pattern := range unique {
		patterns = append(patterns, pattern)
	}
	// Longest first, so the first pattern that matches at a position is the
	// longest one.
	slices.SortFunc(patterns, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})

	r.byPrefix = make(map[uint16][]string, len(patterns))
	for _, pattern := range patterns {
		if r.shortest == 0 || len(pattern) < r.shortest {
			r.shortest = len(pattern)
		}
		if len(pattern) == 1 {
			r.single[pattern[0]] = true
			continue
		}
		prefix := uint16(pattern[0])<<8 | uint16(pattern[1])
		r.pairs[prefix/64] |= 1 << (prefix % 64)
		r.byPrefix[prefix] = append(r.byPrefix[prefix], pattern)
	}
}

// textForms returns the ways value may be written in text: as is, base64-encoded, escaped
// as inside a JSON string (Go escapes <, > and & too), quoted as Go quotes it in errors, and
// escaped as in a URL's query or path (a DSN quoted in an error).
func textForms(value string) []string {
	forms := []string{value, url.QueryEscape(value), url.PathEscape(value)}
	for _, encoding := range base64Encodings {
		forms = append(forms, encoding.EncodeToString([]byte(value)))
	}
	if quoted, err := json.Marshal(value); err == nil {
		forms = append(forms, string(quoted[1:len(quoted)-1]))
	}
	quoted := strconv.Quote(value)
	forms = append(forms, quoted[1:len(quoted)-1])
	return forms
}

// String returns s with every occurrence of a sensitive value, or of its
// base64 encoding, replaced by "(sensitive value)". Use it on error messages
// and log lines that may quote rendered manifests. It returns s itself,
// without allocating, when there is nothing to hide.
func (r *Redactor) String(s string) string {
	if r == nil || r.shortest == 0 || len(s) < r.shortest {
		return s
	}
	var b strings.Builder
	written := 0 // s[:written] is in b
	start, end := -1, -1
	for i := 0; i < len(s); i++ {
		matchEnd := r.matchAt(s, i)
		if matchEnd == 0 {
			continue
		}
		if start >= 0 && i <= end {
			end = max(end, matchEnd)
			continue
		}
		if start >= 0 {
			b.WriteString(s[written:start])
			b.WriteString(redactedMarker)
			written = end
		} else {
			b.Grow(len(s))
		}
		start, end = i, matchEnd
	}
	if start < 0 {
		return s
	}
	b.WriteString(s[written:start])
	b.WriteString(redactedMarker)
	b.WriteString(s[end:])
	return b.String()
}

// matchAt returns the end of the longest pattern that starts at s[i], or 0.
func (r *Redactor) matchAt(s string, i int) int {
	if i+1 < len(s) {
		prefix := uint16(s[i])<<8 | uint16(s[i+1])
		if r.pairs[prefix/64]&(1<<(prefix%64)) != 0 {
			for _, pattern := range r.byPrefix[prefix] {
				if strings.HasPrefix(s[i:], pattern) {
					return i + len(pattern)
				}
			}
		}
	}
	if r.single[s[i]] {
		return i + 1
	}
	return 0
}

// Object returns a redacted copy of obj; obj itself is not changed.
func (r *Redactor) Object(obj Object) Object {
	if obj == nil {
		return nil
	}
	out := copyMap(obj, nil)
	r.redactInPlace(out)
	return out
}

// redactInPlace redacts obj, which the caller owns.
func (r *Redactor) redactInPlace(obj Object) {
	var secretFields map[string]map[string]any
	if isSecret(obj) {
		// Take the values out before the string scan: their hashes must be
		// of the values as written, and the scan must not touch the markers.
		secretFields = map[string]map[string]any{}
		for _, field := range []string{"data", "stringData"} {
			values, ok := obj[field].(map[string]any)
			if !ok {
				continue
			}
			markers := make(map[string]any, len(values))
			for key, value := range values {
				switch {
				case value == nil:
					markers[key] = nil
				case field == "data":
					markers[key] = r.marker(decodeSecretData(value))
				default:
					markers[key] = r.marker(plainBytes(value))
				}
			}
			secretFields[field] = markers
			delete(obj, field)
		}
		if annotations, ok := objectMetadata(obj)["annotations"].(map[string]any); ok {
			if _, ok := annotations[lastAppliedAnnotation]; ok {
				annotations[lastAppliedAnnotation] = redactedMarker
			}
		}
	}
	r.replaceDerived(obj)
	r.redactMap(obj, true)
	for field, markers := range secretFields {
		r.redactMap(markers, false)
		obj[field] = markers
	}
}

// replaceDerived replaces every derived scalar and mapping key of m, at any depth, with its
// marker.
func (r *Redactor) replaceDerived(m map[string]any) {
	if r == nil || r.derived.Len() == 0 {
		return
	}
	var renamed []string
	for key, value := range m {
		m[key] = r.replaceDerivedValue(value)
		if r.derived.has(key) {
			renamed = append(renamed, key)
		}
	}
	slices.Sort(renamed)
	for _, key := range renamed {
		value := m[key]
		delete(m, key)
		newKey := r.marker([]byte(key))
		for n := 2; ; n++ {
			if _, taken := m[newKey]; !taken {
				break
			}
			newKey = fmt.Sprintf("%s (%d)", r.marker([]byte(key)), n)
		}
		m[newKey] = value
	}
}

func (r *Redactor) replaceDerivedValue(value any) any {
	switch v := value.(type) {
	case map[string]any:
		r.replaceDerived(v)
	case []any:
		for i, elem := range v {
			v[i] = r.replaceDerivedValue(elem)
		}
	default:
		if r.derived.has(v) {
			return r.marker(plainBytes(v))
		}
	}
	return value
}

// redactMap redacts the keys of m and, with values, its values at any depth.
func (r *Redactor) redactMap(m map[string]any, values bool) {
	if r == nil || r.shortest == 0 {
		return
	}
	var renamed []string
	for key, value := range m {
		if values {
			m[key] = r.redactValue(value)
		}
		if r.objectString(key) != key {
			renamed = append(renamed, key)
		}
	}
	// Sorted, so colliding keys get the same suffixes every time.
	slices.Sort(renamed)
	for _, key := range renamed {
		value := m[key]
		delete(m, key)
		newKey := r.objectString(key)
		for n := 2; ; n++ {
			if _, taken := m[newKey]; !taken {
				break
			}
			newKey = fmt.Sprintf("%s (%d)", r.objectString(key), n)
		}
		m[newKey] = value
	}
}

func (r *Redactor) redactValue(value any) any {
	switch v := value.(type) {
	case string:
		return r.objectString(v)
	case map[string]any:
		r.redactMap(v, true)
	case []any:
		for i, elem := range v {
			v[i] = r.redactValue(elem)
		}
	}
	return value
}

// WithSecretsOf returns a Redactor that also hides the values of the v1 Secrets among objs,
// as [Redactor.Manifests] hides those of the objects it renders: for objects shown apart
// from the ones rendered, such as a release's hooks, which a refresh takes as Helm recorded
// them. It returns r when they add nothing.
func (r *Redactor) WithSecretsOf(objs []Object) *Redactor {
	return r.withValues(harvestSecretValues(objs))
}

// withValues returns a Redactor that also hides extra, or r when extra adds
// nothing.
func (r *Redactor) withValues(extra []string) *Redactor {
	var known []string
	if r != nil {
		known = r.values
	}
	added := false
	for _, value := range extra {
		if value != "" && !slices.Contains(known, value) {
			added = true
			break
		}
	}
	if !added {
		return r
	}
	if r == nil {
		return NewRedactor(extra, nil, nil)
	}
	return NewRedactor(append(slices.Clone(known), extra...), r.key, r.derived)
}

// harvestSecretValues returns the decoded values of the v1 Secrets in objs
// that are long enough to hide wherever else they occur, usernames aside.
func harvestSecretValues(objs []Object) []string {
	var values []string
	for _, obj := range objs {
		if !isSecret(obj) {
			continue
		}
		data, _ := obj["data"].(map[string]any)
		for key, value := range data {
			if value != nil && !namesAUser(key) {
				values = appendHarvested(values, string(decodeSecretData(value)))
			}
		}
		stringData, _ := obj["stringData"].(map[string]any)
		for key, value := range stringData {
			if value != nil && !namesAUser(key) {
				values = appendHarvested(values, string(plainBytes(value)))
			}
		}
	}
	return values
}

// namesAUser says whether a Secret's key names a username (username, user, admin-user,
// DB_USER, rootUser, MONGO_INITDB_ROOT_USERNAME), which the Secret hides as it hides every
// value, but which is not hidden wherever else it occurs: a username is not a secret, and
// charts write theirs everywhere (elasticsearch's "elastic" is in the name of every object,
// its image and its probes). A username given as sensitive is hidden wherever it occurs.
func namesAUser(key string) bool {
	lower := strings.ToLower(key)
	for _, name := range []string{"username", "user"} {
		if lower == name {
			return true
		}
		if strings.HasSuffix(key, strings.ToUpper(name[:1])+name[1:]) && len(key) > len(name) {
			return true // camelCase: rootUser, adminUsername
		}
		for _, sep := range []string{"-", "_", "."} {
			if strings.HasSuffix(lower, sep+name) {
				return true
			}
		}
	}
	return false
}

func appendHarvested(values []string, value string) []string {
	if len(value) < minHarvestedLength {
		return values
	}
	return append(values, value)
}

func isSecret(obj Object) bool {
	return obj["apiVersion"] == "v1" && obj["kind"] == "Secret"
}

// marker is the text shown in place of one Secret value or derived scalar: a keyed HMAC, or
// without a key "(sensitive value)" alone.
func (r *Redactor) marker(plain []byte) string {
	if r == nil || len(r.key) == 0 {
		return redactedMarker
	}
	mac := hmac.New(sha256.New, r.key)
	mac.Write(plain)
	return "(sensitive value hmac:" + hex.EncodeToString(mac.Sum(nil))[:secretHashLength] + ")"
}

// decodeSecretData decodes a value of a Secret's data. A value that is not
// valid base64 (the API server would reject it) is hashed as written.
func decodeSecretData(value any) []byte {
	s, ok := value.(string)
	if !ok {
		return plainBytes(value)
	}
	decoded, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return []byte(s)
	}
	return decoded
}

// plainBytes returns a stringData value as bytes; non-string values, which
// the API server would reject, are formatted.
func plainBytes(value any) []byte {
	if s, ok := value.(string); ok {
		return []byte(s)
	}
	return []byte(fmt.Sprint(value))
}
