package manifest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/parallel"
)

// Object is one Kubernetes object as JSON-compatible values: map[string]any,
// []any, string, bool, int64, float64 and nil, the shape of
// unstructured.Unstructured.Object.
type Object = map[string]any

// rawDocument is one document of a YAML stream, still unparsed.
type rawDocument struct {
	index int    // 1-based position in the stream, counting empty documents
	line  int    // 1-based line in the stream where text starts
	text  string // the document, without its "---" marker line
}

// SplitDocuments parses multi-document YAML, such as Helm's rendered
// manifest with its "# Source:" comments and empty documents, into objects.
//
// Documents that hold nothing but comments or whitespace are skipped. Lists
// (kind List, or any kind ending in "List" that has items) are flattened into
// their items, recursively; items of a typed list such as ConfigMapList that
// lack apiVersion or kind get the list's apiVersion and the item kind.
//
// Every object must be a mapping with apiVersion, kind and metadata.name.
// Errors name the document (counted from 1, empty documents included) and
// the line where it starts; YAML syntax errors also give the line of the
// error in yamlText. Errors name types, not values, except that the YAML
// converter quotes a mapping used as a key together with its value; pass
// errors through [Redactor.String] before showing them when the text may
// hold sensitive values.
func SplitDocuments(yamlText string) ([]Object, error) {
	objs, _, err := splitDocuments(yamlText)
	return objs, err
}

// SplitDocumentsAndTops is SplitDocuments that also returns the top-level value of each
// document that holds one, as parsed, before lists are flattened into their items: what a
// reader of a document's own fields (its kind, its annotations) sees.
func SplitDocumentsAndTops(yamlText string) (objs []Object, tops []any, err error) {
	return splitDocuments(yamlText)
}

func splitDocuments(yamlText string) ([]Object, []any, error) {
	docs := splitYAMLStream(yamlText)
	// Documents parse on every core: at a thousand objects, parsing is most of a plan's
	// rendering. The errors are then read in the stream's order.
	values := make([]any, len(docs))
	errs := make([]error, len(docs))
	parallel.Chunks(len(docs), func(start, end int) {
		for i := start; i < end; i++ {
			values[i], errs[i] = parseDocument(docs[i])
		}
	})
	var objs []Object
	var tops []any
	for i, doc := range docs {
		value, err := values[i], errs[i]
		if err != nil {
			return nil, nil, fmt.Errorf("document %d (line %d): %w", doc.index, doc.line, err)
		}
		if value == nil {
			continue
		}
		obj, ok := value.(map[string]any)
		if !ok {
			return nil, nil, fmt.Errorf("document %d (line %d): expected a Kubernetes object, got %s", doc.index, doc.line, describeValue(value))
		}
		// Flattening sets the kind and apiVersion of a typed list's items, never the list's
		// own fields, which a top holds.
		tops = append(tops, obj)
		objs, err = appendFlattened(objs, obj, "")
		if err != nil {
			return nil, nil, fmt.Errorf("document %d (line %d): %w", doc.index, doc.line, err)
		}
	}
	return objs, tops, nil
}

// splitYAMLStream cuts text at document markers ("---" at the start of a
// line). A "---" at column 0 always starts a document: block scalar content
// at the top level is indented, and quoted scalars may not contain markers.
func splitYAMLStream(text string) []rawDocument {
	text = strings.TrimPrefix(text, "\ufeff")
	var docs []rawDocument
	start, startLine := 0, 1
	index := 0
	sawMarker := false
	flush := func(end int) {
		body := text[start:end]
		if !sawMarker && isBlankDocument(body) {
			// Text before the first marker is only a document when it
			// holds something.
			return
		}
		index++
		docs = append(docs, rawDocument{index: index, line: startLine, text: body})
	}

	line := 1
	for offset := 0; offset < len(text); line++ {
		end := strings.IndexByte(text[offset:], '\n')
		next := len(text)
		if end >= 0 {
			end += offset
			next = end + 1
		} else {
			end = len(text)
		}
		if rest, ok := cutDocumentMarker(text[offset:end]); ok {
			flush(offset)
			sawMarker = true
			if strings.TrimSpace(rest) == "" {
				start, startLine = next, line+1
			} else {
				start, startLine = offset+len("---"), line
			}
		}
		offset = next
	}
	flush(len(text))
	return docs
}

// cutDocumentMarker reports whether line is a "---" document marker and
// returns what follows the marker on the same line.
func cutDocumentMarker(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, "---")
	if !ok {
		return "", false
	}
	rest = strings.TrimSuffix(rest, "\r")
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", false
	}
	return rest, true
}

// isBlankDocument reports whether text holds only whitespace and comments.
func isBlankDocument(text string) bool {
	for line := range strings.Lines(text) {
		trimmed := strings.TrimSpace(line)
		if trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			return false
		}
	}
	return true
}

// parseDocument parses one document into JSON-compatible values with
// integers as int64, as unstructured objects hold them. It returns nil for an
// empty or null document.
func parseDocument(doc rawDocument) (any, error) {
	if isBlankDocument(doc.text) {
		return nil, nil
	}
	value, err := parsed.value(doc.text)
	if err != nil {
		// Parse again at the document's place in the stream, so the
		// parser's "line N" is a line of the whole text.
		padded := strings.Repeat("\n", doc.line-1) + doc.text
		if _, errInStream := parseYAMLValue([]byte(padded)); errInStream != nil {
			err = errInStream
		}
		return nil, fmt.Errorf("parse yaml: %w", err)
	}
	return value, nil
}

// appendFlattened appends obj to objs, or its items if obj is a list. where
// prefixes errors with the item's position inside enclosing lists.
func appendFlattened(objs []Object, obj Object, where string) ([]Object, error) {
	kind, _ := obj["kind"].(string)
	if items, isList := listItems(obj, kind); isList {
		itemKind := strings.TrimSuffix(kind, "List")
		for i, item := range items {
			itemWhere := fmt.Sprintf("%sitem %d of %s: ", where, i+1, kind)
			itemObj, ok := item.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%sexpected a Kubernetes object, got %s", itemWhere, describeValue(item))
			}
			if itemKind != "" {
				// Typed lists (ConfigMapList) may leave out the type of
				// their items.
				if _, ok := itemObj["kind"]; !ok {
					itemObj["kind"] = itemKind
				}
				if _, ok := itemObj["apiVersion"]; !ok {
					itemObj["apiVersion"] = obj["apiVersion"]
				}
			}
			var err error
			if objs, err = appendFlattened(objs, itemObj, itemWhere); err != nil {
				return nil, err
			}
		}
		return objs, nil
	}
	if err := checkIdentity(obj); err != nil {
		return nil, errors.New(where + err.Error())
	}
	return append(objs, obj), nil
}

// listItems returns the items of a List or *List object.
func listItems(obj Object, kind string) ([]any, bool) {
	if !strings.HasSuffix(kind, "List") {
		return nil, false
	}
	items, present := obj["items"]
	if !present {
		return nil, kind == "List"
	}
	list, ok := items.([]any)
	if !ok && items != nil {
		return nil, false
	}
	return list, true
}

// checkIdentity makes sure obj can be keyed and applied.
func checkIdentity(obj Object) error {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	switch {
	case kind == "":
		return errors.New("object has no kind")
	case apiVersion == "":
		return fmt.Errorf("%s has no apiVersion", kind)
	case objectName(obj) == "":
		return fmt.Errorf("%s has no metadata.name (generateName is not supported)", kind)
	}
	return nil
}

// describeValue names the YAML type of a value that should have been an
// object, without printing the value, which may be sensitive.
func describeValue(value any) string {
	switch value.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	default:
		return fmt.Sprintf("%T", value)
	}
}
