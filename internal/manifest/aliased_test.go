package manifest

import (
	"reflect"
	"strings"
	"testing"
)

// Helm 4 hands a post-renderer a List's items as documents of their own, each keeping the
// anchors and aliases it had in the List; they read as the List did.
func TestSplitAliasedDocuments_aliasesOfEarlierDocuments(t *testing.T) {
	stream := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n  labels: &labels\n    app: web\ndata: &data\n  script: |+\n    echo one\n\n      indented\n\n" +
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n  labels: *labels\ndata: *data\n"
	if _, err := SplitDocuments(stream); err == nil || !strings.Contains(err.Error(), "unknown anchor") {
		t.Fatalf("SplitDocuments = %v; the test needs a stream it cannot read", err)
	}
	objs, err := SplitAliasedDocuments(stream)
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]any{"script": "echo one\n\n  indented\n\n"}
	labels := map[string]any{"app": "web"}
	want := []Object{
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "one", "labels": labels}, "data": data},
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "two", "labels": labels}, "data": data},
	}
	if !reflect.DeepEqual(objs, want) {
		t.Errorf("SplitAliasedDocuments =\n%#v\nwant\n%#v", objs, want)
	}
}

// A stream SplitDocuments reads is read as SplitDocuments reads it, and one that neither
// reads gets SplitDocuments' error, which names the document and line.
func TestSplitAliasedDocuments_otherwiseSplitDocuments(t *testing.T) {
	plain := "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: a\n"
	got, err := SplitAliasedDocuments(plain)
	want, wantErr := SplitDocuments(plain)
	if err != nil || wantErr != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("SplitAliasedDocuments = %v, %v; SplitDocuments = %v, %v", got, err, want, wantErr)
	}
	broken := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [b\n"
	_, err = SplitAliasedDocuments(broken)
	_, wantErr = SplitDocuments(broken)
	if err == nil || err.Error() != wantErr.Error() || !strings.Contains(err.Error(), "document 2") {
		t.Errorf("SplitAliasedDocuments error = %v, want SplitDocuments' %v", err, wantErr)
	}
}

// A string ending in blank lines is written double-quoted, every other string as Render
// writes it, and the text reads back as the object.
func TestRenderRewritable_quotesStringsEndingInBlankLines(t *testing.T) {
	obj := Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"},
		"data": map[string]any{"kept": "echo\n\n\n", "clipped": "line one\nline two\n", "plain": "x"}}
	text, err := RenderRewritable(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, `kept: "echo\n\n\n"`) || !strings.Contains(text, "clipped: |\n") || MayChangeWhenRewritten(text) {
		t.Errorf("RenderRewritable =\n%s", text)
	}
	objs, err := SplitDocuments(text)
	if err != nil || len(objs) != 1 || !reflect.DeepEqual(objs[0], obj) {
		t.Errorf("RenderRewritable reads back as %v (%v), want %v", objs, err, obj)
	}
}

// A block scalar that ends its document with no newline after it (a template ending in
// "{{- end }}") reads with its newline as Helm writes it into its manifest, and without it as
// Helm 4's post-render path parses it: such a document may change when rewritten. The same
// scalar with a newline after it, or followed by another key, or strip-chomped, may not.
func TestMayChangeWhenRewritten_blockScalarEndingTheDocument(t *testing.T) {
	head := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n"
	for doc, want := range map[string]bool{
		head + "  global: |\n    {\n      \"a\": 3\n    }":   true,
		head + "  global: >\n    folded\n    text":           true,
		head + "  global: |\n    {\n      \"a\": 3\n    }\n": false,
		head + "  global: |\n    {\n    }\n  other: x":       false,
		head + "  global: |-\n    {\n      \"a\": 3\n    }":  false,
		head + "  plain: x": false,
		head + "  script: |  # comment\n    echo a\n    echo b": true,
	} {
		if got := MayChangeWhenRewritten(doc); got != want {
			t.Errorf("MayChangeWhenRewritten(%q) = %t, want %t", doc, got, want)
		}
	}
}
