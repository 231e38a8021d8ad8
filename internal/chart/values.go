package chart

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/strvals"
)

// Values are the user-supplied values of a release, merged the way helm
// merges -f files, --set and --set-string.
type Values struct {
	// Documents are YAML mappings, merged in order: maps merge key by key,
	// anything else in a later document replaces the earlier value.
	Documents []string
	// Set maps a Helm value path ("image.tag", "env[0].name",
	// "podAnnotations.example\.com/team") to a value typed as helm --set
	// types it: true/false, null, integers without leading zeros, else a
	// string. The value is taken literally: commas, braces and backslashes
	// are part of it.
	Set map[string]string
	// SetSensitive is like Set, but its values are always strings (helm
	// --set-string) and never appear in errors.
	SetSensitive map[string]string
	// SensitiveDocuments are YAML mappings merged after Documents, before
	// Set; every string and number in them is a sensitive value.
	SensitiveDocuments []string
}

// ValuesInput is the field of Values an input comes from.
type ValuesInput int

const (
	InDocuments ValuesInput = iota
	InSensitiveDocuments
	InSet
	InSetSensitive
)

func (in ValuesInput) String() string {
	switch in {
	case InDocuments:
		return "Documents"
	case InSensitiveDocuments:
		return "SensitiveDocuments"
	case InSet:
		return "Set"
	case InSetSensitive:
		return "SetSensitive"
	}
	return fmt.Sprintf("ValuesInput(%d)", int(in))
}

// IsDocument reports whether in is a list of YAML documents, which Index and Line point into,
// rather than a map of paths, which Key does.
func (in ValuesInput) IsDocument() bool { return in == InDocuments || in == InSensitiveDocuments }

// ValuesError is an input MergeValues cannot merge: the document Index (from 0) of Documents
// or SensitiveDocuments, at Line (from 1; 0 when the parser names none), or the path Key of
// Set or SetSensitive.
type ValuesError struct {
	Input ValuesInput
	Index int
	Line  int
	Key   string
	Err   error
}

func (e *ValuesError) Error() string {
	if e.Input.IsDocument() {
		return fmt.Sprintf("%s[%d]: %v", e.Input, e.Index, e.Err)
	}
	return fmt.Sprintf("%s[%q]: %v", e.Input, e.Key, e.Err)
}

func (e *ValuesError) Unwrap() error { return e.Err }

// MergeValues merges v into the values map Helm renders with: Documents in
// order, then SensitiveDocuments, then Set, then SetSensitive, each key path
// in lexical order. Errors are *ValuesError, naming the document and line, or
// the path that does not parse; they never contain a sensitive value.
func MergeValues(v Values) (map[string]any, error) {
	return mergeValues(v, -1)
}

// mergeValues is MergeValues with, for a round of 0 or more, every sensitive input replaced
// by its substitute of that round.
func mergeValues(v Values, round int) (map[string]any, error) {
	merged := map[string]any{}
	for i, doc := range v.Documents {
		values, err := common.ReadValues([]byte(doc))
		if err != nil {
			return nil, documentError(InDocuments, i, err)
		}
		merged = mergeMaps(merged, values)
	}
	for i, doc := range v.SensitiveDocuments {
		values, err := common.ReadValues([]byte(doc))
		if err != nil {
			return nil, documentError(InSensitiveDocuments, i, err)
		}
		if substituted, ok := substituteLeaves(map[string]any(values), round).(map[string]any); ok && round >= 0 {
			values = substituted
		}
		merged = mergeMaps(merged, values)
	}
	for _, key := range sortedKeys(v.Set) {
		if err := setValue(merged, key, v.Set[key], false); err != nil {
			return nil, &ValuesError{Input: InSet, Key: key, Err: err}
		}
	}
	for _, key := range sortedKeys(v.SetSensitive) {
		value := v.SetSensitive[key]
		if round >= 0 {
			value = substitute(value, round)
		}
		if err := setValue(merged, key, value, true); err != nil {
			return nil, &ValuesError{Input: InSetSensitive, Key: key, Err: err}
		}
	}
	return merged, nil
}

// SensitiveInputs returns the sensitive values of v: the set_sensitive values and the texts
// of the leaves of the sensitive documents. Documents that do not parse give none (merging
// them fails anyway).
func (v Values) SensitiveInputs() []string {
	var out []string
	for _, key := range sortedKeys(v.SetSensitive) {
		out = append(out, v.SetSensitive[key])
	}
	for _, doc := range v.SensitiveDocuments {
		if values, err := common.ReadValues([]byte(doc)); err == nil {
			for _, text := range leafTexts(map[string]any(values), nil) {
				// Short leaves ("1", "on") would hide characters everywhere in text; where the
				// chart uses them, the comparison with substitutes still finds them.
				if len(text) >= minSensitiveLeafLength {
					out = append(out, text)
				}
			}
		}
	}
	return out
}

// minSensitiveLeafLength is the shortest leaf of a sensitive document hidden inside text.
const minSensitiveLeafLength = 4

// setValue sets the value at path in dest, as helm --set (or --set-string
// when asString) would for "path=value" with value escaped.
func setValue(dest map[string]any, path, value string, asString bool) error {
	if err := checkSetPath(path); err != nil {
		return err
	}
	// Parse the path alone first, so that a path error never quotes the
	// value. Helm 4's parser sets nothing for a path it cannot read to the
	// end ("list[0"), without an error.
	parsed := map[string]any{}
	if err := strvals.ParseInto(path+"=x", parsed); err != nil {
		return fmt.Errorf("path does not parse: %w", err)
	}
	if len(parsed) == 0 {
		return errors.New("path does not parse: it sets no value")
	}
	parse := strvals.ParseInto
	if asString {
		parse = strvals.ParseIntoString
	}
	if err := parse(path+"="+escapeSetValue(value), dest); err != nil {
		message := err.Error()
		if asString && value != "" {
			message = strings.ReplaceAll(message, value, "(sensitive value)")
		}
		return fmt.Errorf("cannot set path: %s", message)
	}
	return nil
}

// checkSetPath rejects paths Helm's parser would read as more than one
// assignment or as a path plus part of the value.
func checkSetPath(path string) error {
	if path == "" {
		return errors.New("path is empty")
	}
	escaped := false
	for _, r := range path {
		switch {
		case escaped:
			escaped = false
		case r == '\\':
			escaped = true
		case r == '=' || r == ',':
			return fmt.Errorf("path does not parse: unescaped %q; escape it as \\%c", r, r)
		}
	}
	if escaped {
		return errors.New("path does not parse: it ends in an escaping backslash")
	}
	return nil
}

// escapeSetValue makes strvals take value literally: a backslash escapes
// the next rune, a comma would start the next assignment and a leading
// brace a list.
func escapeSetValue(value string) string {
	var b strings.Builder
	b.Grow(len(value) + 2)
	for i, r := range value {
		if r == '\\' || r == ',' || (i == 0 && r == '{') {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mergeMaps is helm's values merge: maps merge recursively, anything else
// in b replaces what a has.
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bMap, ok := v.(map[string]any); ok {
			if aMap, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(aMap, bMap)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// yamlLineError reads the line of a syntax error from its message. The YAML library Helm's
// ReadValues parses with (go.yaml.in/yaml/v2, under sigs.k8s.io/yaml) reports a syntax error
// only as text, "yaml: line N: what" (its parser's failf), with no typed error that holds the
// line, so the message is the only place the line is found.
var yamlLineError = regexp.MustCompile(`^(?:error converting YAML to JSON: )?yaml: line (\d+): (.*)$`)

// documentError is the *ValuesError of document index of input, which the YAML library
// refused with err: "invalid YAML at line N: what", with its Line.
func documentError(input ValuesInput, index int, err error) *ValuesError {
	out := &ValuesError{Input: input, Index: index}
	m := yamlLineError.FindStringSubmatch(err.Error())
	var notMapping *json.UnmarshalTypeError
	switch {
	case m != nil:
		out.Line, _ = strconv.Atoi(m[1])
		out.Err = fmt.Errorf("invalid YAML at line %s: %s", m[1], m[2])
	case errors.As(err, &notMapping):
		// The document parsed, as something other than a mapping (a list, a scalar).
		out.Err = errors.New("not a YAML mapping of values (a document must map keys to values)")
	default:
		out.Err = fmt.Errorf("invalid YAML: %w", err)
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
