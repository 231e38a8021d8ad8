package manifest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Derived holds what a rendering derived from its sensitive inputs: the text of every scalar
// (string, number, boolean) and mapping key that came out differently when the chart was
// rendered again with the sensitive inputs replaced by other values. It knows nothing of
// template functions: a password quoted, URL-escaped, JSON-encoded, upper-cased, truncated,
// concatenated, base64-encoded twice or hashed into a checksum annotation changes with the
// password, and so is found.
//
// A Redactor with a Derived (see [NewRedactor]) replaces each such scalar whole, wherever
// it occurs, with a keyed marker, and hides its text in error messages and logs.
type Derived struct {
	strings map[string]bool // derived strings and mapping keys
	others  map[string]bool // derived numbers and booleans, by their text

	// digests, when not nil, replaces strings and others: keyed digests of them (see
	// [Derived.Digests]), for redacting objects read back from the cluster without keeping
	// the values themselves.
	digests   map[string]bool
	digestKey []byte
}

// Len returns how many distinct derived scalars d holds.
func (d *Derived) Len() int {
	if d == nil {
		return 0
	}
	return len(d.strings) + len(d.others) + len(d.digests)
}

// Digests returns a keyed digest of each derived scalar, sorted: what [DerivedFromDigests]
// needs to recognize them again, and nothing that tells their values without the key.
func (d *Derived) Digests(key []byte) []string {
	if d == nil {
		return nil
	}
	var out []string
	for s := range d.strings {
		out = append(out, scalarDigest(key, "s", s))
	}
	for s := range d.others {
		out = append(out, scalarDigest(key, "n", s))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// DerivedFromDigests returns a Derived that recognizes the scalars whose digests with key are
// among digests. It hides them in objects, not in text: it does not know their text.
func DerivedFromDigests(key []byte, digests []string) *Derived {
	d := &Derived{digests: make(map[string]bool, len(digests)), digestKey: slices.Clone(key)}
	for _, digest := range digests {
		d.digests[digest] = true
	}
	return d
}

// scalarDigest is 16 hex characters of an HMAC-SHA256 of a scalar's kind and text.
func scalarDigest(key []byte, kind, text string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(kind + ":" + text))
	return hex.EncodeToString(mac.Sum(nil))[:16]
}

// Digest returns an HMAC-SHA256 with key of objs as they are, unredacted, for telling whether
// two renderings are the same without keeping either.
func Digest(key []byte, objs []Object) (string, error) {
	text, err := json.Marshal(objs)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write(text)
	return hex.EncodeToString(mac.Sum(nil)), nil
}

// StructureError says that a rendering's structure, not only its scalars, depends on a
// sensitive input: objects appear or disappear, or a list changes length. It names objects by
// position and kind and paths through keys that did not change, so it never quotes a value.
type StructureError struct {
	Object string // "object 3 (ConfigMap)"
	Path   string // ".data", "" for the object set
}

func (e *StructureError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s: the set of objects changes with the sensitive values", e.Object)
	}
	return fmt.Sprintf("%s: %s changes shape with the sensitive values (a list changes length, or keys appear or disappear)", e.Object, e.Path)
}

// FindDerived compares the objects of a rendering with alternates: renderings of the same
// chart with every sensitive input replaced by another value of the same length and character
// classes. same, when not nil, is a second rendering with the same inputs: an object that
// differs there renders differently each time (randAlphaNum, now) and is left out of the
// comparison, as it cannot be shown in a plan anyway.
//
// Objects are paired by kind, namespace and name, and those left over (a name derived from a
// sensitive input) by kind in rendering order. Where the pairs differ in structure, it
// returns a *StructureError.
func FindDerived(objs, same []Object, alternates ...[]Object) (*Derived, error) {
	d := &Derived{strings: map[string]bool{}, others: map[string]bool{}}
	varying := varyingIndexes(objs, same)
	for _, alt := range alternates {
		pairs, err := pairObjects(objs, alt, varying)
		if err != nil {
			return nil, err
		}
		for i, j := range pairs {
			if err := d.compare(objs[i], alt[j], ""); err != nil {
				return nil, &StructureError{Object: describeObject(i, objs[i]), Path: err.Error()}
			}
		}
	}
	return d, nil
}

// varyingIndexes returns the indexes of the objects of objs that same does not render alike,
// paired by kind, namespace and name only: a name that varies makes only that object vary.
func varyingIndexes(objs, same []Object) map[int]bool {
	varying := map[int]bool{}
	if same == nil {
		return varying
	}
	byIdentity := map[string][]Object{}
	for _, obj := range same {
		byIdentity[objectIdentity(obj)] = append(byIdentity[objectIdentity(obj)], obj)
	}
	for i, obj := range objs {
		candidates := byIdentity[objectIdentity(obj)]
		if len(candidates) == 0 || !reflect.DeepEqual(obj, candidates[0]) {
			varying[i] = true
		}
		if len(candidates) > 0 {
			byIdentity[objectIdentity(obj)] = candidates[1:]
		}
	}
	return varying
}

// pairObjects maps each index of objs not in skip to the index of its counterpart in alt.
func pairObjects(objs, alt []Object, skip map[int]bool) (map[int]int, error) {
	byIdentity := map[string][]int{}
	for j, obj := range alt {
		byIdentity[objectIdentity(obj)] = append(byIdentity[objectIdentity(obj)], j)
	}
	pairs := map[int]int{}
	used := map[int]bool{}
	skippedByKind := map[string]int{}
	var leftover []int
	for i, obj := range objs {
		if skip[i] {
			skippedByKind[objectKind(obj)]++
			continue
		}
		candidates := byIdentity[objectIdentity(obj)]
		if len(candidates) == 0 {
			leftover = append(leftover, i)
			continue
		}
		pairs[i], used[candidates[0]] = candidates[0], true
		byIdentity[objectIdentity(obj)] = candidates[1:]
	}
	// What is left over pairs by kind, in order: the same templates rendered both.
	unusedByKind := map[string][]int{}
	for j, obj := range alt {
		if !used[j] {
			unusedByKind[objectKind(obj)] = append(unusedByKind[objectKind(obj)], j)
		}
	}
	for _, i := range leftover {
		kind := objectKind(objs[i])
		if len(unusedByKind[kind]) <= skippedByKind[kind] {
			return nil, &StructureError{Object: describeObject(i, objs[i])}
		}
		pairs[i] = unusedByKind[kind][0]
		unusedByKind[kind] = unusedByKind[kind][1:]
	}
	// Objects that render differently each time account for as many unpaired ones; any more
	// exist only with the other inputs.
	for kind, rest := range unusedByKind {
		if len(rest) > skippedByKind[kind] {
			return nil, &StructureError{Object: describeObject(rest[0], alt[rest[0]])}
		}
	}
	return pairs, nil
}

func objectKind(obj Object) string {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return apiVersion + " " + kind
}

func objectIdentity(obj Object) string {
	return objectKind(obj) + " " + objectNamespace(obj) + "/" + objectName(obj)
}

func describeObject(i int, obj Object) string {
	kind, _ := obj["kind"].(string)
	return fmt.Sprintf("object %d (%s)", i+1, kind)
}

// compare records in d every scalar of a that differs from b, and returns an error naming the
// path where their structure differs.
func (d *Derived) compare(a, b any, path string) error {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return shapeError(path)
		}
		return d.compareMaps(av, bv, path)
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return shapeError(path)
		}
		for i := range av {
			if err := d.compare(av[i], bv[i], path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
		return nil
	}
	switch b.(type) {
	case map[string]any, []any:
		return shapeError(path)
	}
	if !reflect.DeepEqual(a, b) {
		d.add(a)
	}
	return nil
}

func (d *Derived) compareMaps(a, b map[string]any, path string) error {
	var onlyA, onlyB []string
	for k, v := range a {
		other, ok := b[k]
		if !ok {
			onlyA = append(onlyA, k)
			continue
		}
		if err := d.compare(v, other, path+"."+k); err != nil {
			return err
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			onlyB = append(onlyB, k)
		}
	}
	if len(onlyA) != len(onlyB) {
		return shapeError(path)
	}
	// Keys derived from a sensitive input: pair them in order and compare what they hold.
	slices.Sort(onlyA)
	slices.Sort(onlyB)
	for i, k := range onlyA {
		d.strings[k] = true
		if err := d.compare(a[k], b[onlyB[i]], path+".(sensitive key)"); err != nil {
			return err
		}
	}
	return nil
}

func shapeError(path string) error {
	if path == "" {
		path = "the object"
	}
	return fmt.Errorf("%s", path)
}

func (d *Derived) add(value any) {
	switch v := value.(type) {
	case nil:
	case string:
		d.strings[v] = true
	default:
		d.others[fmt.Sprint(v)] = true
	}
}

// has reports whether value is a derived scalar.
func (d *Derived) has(value any) bool {
	if d == nil {
		return false
	}
	switch v := value.(type) {
	case nil:
		return false
	case string:
		if d.digests != nil {
			return d.digests[scalarDigest(d.digestKey, "s", v)]
		}
		return d.strings[v]
	case map[string]any, []any:
		return false
	default:
		if d.digests != nil {
			return d.digests[scalarDigest(d.digestKey, "n", fmt.Sprint(v))]
		}
		return d.others[fmt.Sprint(v)]
	}
}

// minDerivedTextLength is the shortest derived string also hidden inside longer text (error
// messages, logs). Shorter ones ("a", "on") would hide letters everywhere; in manifests they
// are still replaced whole.
const minDerivedTextLength = 4

// texts returns the derived strings long enough to hide inside text.
func (d *Derived) texts() []string {
	if d == nil {
		return nil
	}
	var out []string
	for s := range d.strings {
		if len(s) >= minDerivedTextLength && !strings.HasPrefix(s, redactedPrefix) {
			out = append(out, s)
		}
	}
	for s := range d.others {
		if len(s) >= minDerivedTextLength {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// RedactDifferences returns text with the part that differs from any of alternates replaced
// by "(sensitive value)": text is a message (a template error) produced from sensitive
// inputs, each alternate the same message produced with the inputs substituted, so what
// differs came from the inputs. The part kept is the longest prefix and suffix all of them
// share; a message that shares nothing with an alternate is replaced whole.
func RedactDifferences(text string, alternates ...string) string {
	prefix, suffix := len(text), len(text)
	for _, alt := range alternates {
		if alt == text {
			continue
		}
		p := commonPrefix(text, alt)
		s := commonPrefix(reverse(text[p:]), reverse(alt[min(p, len(alt)):]))
		prefix, suffix = min(prefix, p), min(suffix, s)
	}
	if prefix == len(text) {
		return text
	}
	// Keep whole words: a value's first characters may match its substitute's.
	for prefix > 0 && isWordByte(text[prefix-1]) {
		prefix--
	}
	end := len(text) - suffix
	for end < len(text) && isWordByte(text[end]) {
		end++
	}
	return text[:prefix] + redactedMarker + text[end:]
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// isWordByte reports whether c may be part of a value: anything but space and the quotes and
// brackets messages put around values.
func isWordByte(c byte) bool {
	return !strings.ContainsRune(" \t\n\"'`()[]{}<>", rune(c))
}
