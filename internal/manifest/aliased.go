package manifest

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// SplitAliasedDocuments is SplitDocuments for a stream whose documents may name anchors of
// earlier documents. Helm 4 unwraps a List into one document per item before it hands the
// stream to a post-renderer, and an alias in one item then names an anchor of another: such
// a stream is read as the one sequence its documents were. Where no document needs that, it
// is SplitDocuments, with its errors.
func SplitAliasedDocuments(yamlText string) ([]Object, error) {
	objs, err := SplitDocuments(yamlText)
	if err == nil {
		return objs, nil
	}
	var sequence strings.Builder
	for _, doc := range splitYAMLStream(yamlText) {
		if isBlankDocument(doc.text) {
			continue
		}
		sequence.WriteString("-\n")
		for line := range strings.Lines(doc.text) {
			if strings.TrimRight(line, "\r\n") != "" {
				// Indented alike, a block scalar's lines keep their content.
				sequence.WriteString("  ")
			}
			sequence.WriteString(line)
		}
		if !strings.HasSuffix(doc.text, "\n") {
			sequence.WriteString("\n")
		}
	}
	value, seqErr := parseDocument(rawDocument{index: 1, line: 1, text: sequence.String()})
	items, ok := value.([]any)
	if seqErr != nil || !ok {
		return nil, err
	}
	objs = nil
	for i, item := range items {
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("document %d: expected a Kubernetes object, got %s", i+1, describeValue(item))
		}
		if objs, err = appendFlattened(objs, obj, fmt.Sprintf("document %d: ", i+1)); err != nil {
			return nil, err
		}
	}
	return objs, nil
}

// mayChangeWhenRewritten matches what a YAML parser that keeps the text's structure (Helm 4's,
// before and after a post-renderer) may write back otherwise: an anchor or an alias, and a
// block scalar that keeps its trailing newlines. It matches more than that (an "&" or "*"
// starting a plain word), which only costs a rewrite that was not needed.
var mayChangeWhenRewritten = regexp.MustCompile(`(?m)(^|[\s\[{,:-])[&*][^\s,\[\]{}]|[|>][1-9]?\+`)

// blockScalarHeader matches the header of a block scalar ("|", ">-", "|2+").
var blockScalarHeader = regexp.MustCompile(`(?m)[|>][1-9+-]*[ \t]*(#.*)?$`)

// blockScalarEndsWithoutNewline reports whether doc ends in a block scalar with no newline after
// its last line (a template ending in "{{- end }}"), which reads with its final newline as Helm
// writes the document into its manifest and without it as Helm 4's post-render path parses it.
func blockScalarEndsWithoutNewline(doc string) bool {
	if strings.HasSuffix(doc, "\n") || !blockScalarHeader.MatchString(doc) {
		return false
	}
	as, errAs := SplitDocuments(doc)
	closed, errClosed := SplitDocuments(doc + "\n")
	return errAs != nil || errClosed != nil || !reflect.DeepEqual(as, closed)
}

// MayChangeWhenRewritten reports whether a YAML document may read otherwise once a parser
// that keeps its structure has written it again: it has an anchor, an alias, a block scalar
// that keeps its trailing newlines or ends the document without a newline after it, or a key
// given twice (which Kubernetes reads as the last).
func MayChangeWhenRewritten(doc string) bool {
	if mayChangeWhenRewritten.MatchString(doc) || blockScalarEndsWithoutNewline(doc) {
		return true
	}
	_, err := yaml.YAMLToJSONStrict([]byte(doc))
	return err != nil
}
