package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Render returns obj as YAML: mapping keys sorted, two-space indentation,
// list items at their key's indentation (as kubectl prints them), multi-line
// strings as literal blocks, and no line wrapping, so a changed value changes
// only its own lines. The same object always renders to the same text,
// whatever Go number types it holds.
//
// Rendering uses go.yaml.in/yaml/v3, a dependency of sigs.k8s.io/yaml
// itself, because sigs.k8s.io/yaml.Marshal wraps long strings at 80 columns
// and only a process-wide switch turns that off. Strings YAML 1.1 would read
// as something else ("yes", "on", "0777") are quoted, so the output reads
// back the same through sigs.k8s.io/yaml, which parses like kubectl and Helm.
func Render(obj Object) (string, error) {
	return renderValue(obj)
}

func renderValue(value any) (string, error) {
	if !isPlainJSONValue(value) {
		// json.Number, typed maps and slices, structs: bring them to the
		// plain form first so equal objects render equally.
		data, err := json.Marshal(value)
		if err != nil {
			return "", fmt.Errorf("render yaml: %w", err)
		}
		value = nil
		if err := utiljson.Unmarshal(data, &value); err != nil {
			return "", fmt.Errorf("render yaml: %w", err)
		}
	}
	var buf bytes.Buffer
	encoder := yamlv3.NewEncoder(&buf)
	encoder.SetIndent(2)
	encoder.CompactSeqIndent()
	if err := encoder.Encode(value); err != nil {
		return "", fmt.Errorf("render yaml: %w", err)
	}
	if err := encoder.Close(); err != nil {
		return "", fmt.Errorf("render yaml: %w", err)
	}
	return buf.String(), nil
}

// isPlainJSONValue reports whether value holds only the types the YAML
// encoder renders exactly as JSON would see them.
func isPlainJSONValue(value any) bool {
	switch v := value.(type) {
	case nil, string, bool, int64, int, int32, float64:
		return true
	case map[string]any:
		for _, elem := range v {
			if !isPlainJSONValue(elem) {
				return false
			}
		}
		return true
	case []any:
		for _, elem := range v {
			if !isPlainJSONValue(elem) {
				return false
			}
		}
		return true
	default:
		return false
	}
}

// CanonicalYAML parses s and renders it again the way [Render] does, so two
// texts that mean the same have the same canonical form: key order,
// indentation, quoting style and comments do not matter. Each document of a
// multi-document text is canonicalized; empty documents are dropped and the
// rest are joined by "---" lines. An empty or null text becomes "".
func CanonicalYAML(s string) (string, error) {
	var out strings.Builder
	for _, doc := range splitYAMLStream(s) {
		value, err := parseDocument(doc)
		if err != nil {
			return "", fmt.Errorf("document %d (line %d): %w", doc.index, doc.line, err)
		}
		if value == nil {
			continue
		}
		text, err := renderValue(value)
		if err != nil {
			return "", fmt.Errorf("document %d (line %d): %w", doc.index, doc.line, err)
		}
		if out.Len() > 0 {
			out.WriteString("---\n")
		}
		out.WriteString(text)
	}
	return out.String(), nil
}

// YAMLEqual reports whether a and b hold the same data: key order,
// whitespace, quoting style and comments do not matter. Both are parsed,
// even when identical, so invalid YAML is always an error.
func YAMLEqual(a, b string) (bool, error) {
	canonicalA, err := CanonicalYAML(a)
	if err != nil {
		return false, fmt.Errorf("first yaml: %w", err)
	}
	canonicalB, err := CanonicalYAML(b)
	if err != nil {
		return false, fmt.Errorf("second yaml: %w", err)
	}
	return canonicalA == canonicalB, nil
}

// RenderRewritable is Render with every string that ends in more than one newline written
// double-quoted rather than as a literal block that keeps its trailing newlines ("|+"): a
// parser that keeps the text's structure and writes it again (Helm 4's, on both sides of a
// post-renderer) loses such a block's last newline at the end of a document, while it writes
// a quoted string as it read it.
func RenderRewritable(obj Object) (string, error) {
	text, err := renderValue(obj)
	if err != nil {
		return "", err
	}
	if !strings.Contains(text, "+\n") {
		return text, nil
	}
	var node yamlv3.Node
	if err := yamlv3.Unmarshal([]byte(text), &node); err != nil {
		return "", fmt.Errorf("render yaml: %w", err)
	}
	quoteKeptNewlines(&node)
	var buf bytes.Buffer
	encoder := yamlv3.NewEncoder(&buf)
	encoder.SetIndent(2)
	encoder.CompactSeqIndent()
	if err := encoder.Encode(&node); err != nil {
		return "", fmt.Errorf("render yaml: %w", err)
	}
	if err := encoder.Close(); err != nil {
		return "", fmt.Errorf("render yaml: %w", err)
	}
	return buf.String(), nil
}

// quoteKeptNewlines double-quotes every string of node that ends in more than one newline.
func quoteKeptNewlines(node *yamlv3.Node) {
	if node.Kind == yamlv3.ScalarNode && node.Tag == "!!str" && strings.HasSuffix(node.Value, "\n\n") {
		node.Style = yamlv3.DoubleQuotedStyle
	}
	for _, child := range node.Content {
		quoteKeptNewlines(child)
	}
}
