package chart

import (
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
)

// helmSplit is Helm's own cut of text into documents, in their order.
func helmSplit(text string) []string {
	split := releaseutil.SplitManifests(text)
	keys := slices.Collect(maps.Keys(split))
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	docs := make([]string, 0, len(keys))
	for _, k := range keys {
		docs = append(docs, split[k])
	}
	return docs
}

// The documents are Helm's, to the byte, for the texts charts write (separators with
// comments, spaces and tabs after them, glued to a document, in the middle of a line, at the
// start and the end, documents of white space alone) and for random texts of the pieces
// that decide a cut.
func TestSplitTemplateOutput_isHelms(t *testing.T) {
	texts := []string{
		"",
		"---",
		"\n\n  \t\n",
		"apiVersion: v1\nkind: ConfigMap\n",
		"---\napiVersion: v1\nkind: A\n---\napiVersion: v1\nkind: B\n",
		"# Source: c/templates/a.yaml\napiVersion: v1\n--- # comment\nkind: B\n",
		"---apiVersion: v1\nkind: glued\n",
		"a: 1\n---\t \n\n---\n   \nb: 2\n---",
		"a: |\n  text\n  ---\n  more\nb: x---y\n----\nc: 3\n",
		"a: 1\r\n---\r\nb: 2\r\n",
		"  \n  ---\nnot: a separator after spaces\n",
		"\n---\n---\n---\n",
		"a: \"---\"\n---\n\xff\xfe: bytes\n",
	}
	pieces := []string{"---", "--", "-", " ", "\t", "\n", "\r\n", "a: 1", "#", "\u00a0", "\xff", "x"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var b strings.Builder
		for range r.IntN(24) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	for _, text := range texts {
		if got, want := splitTemplateOutput(text), helmSplit(text); !slices.Equal(got, want) {
			t.Fatalf("splitTemplateOutput(%q)\n = %q\nHelm: %q", text, got, want)
		}
	}
}

func BenchmarkSplitTemplateOutput(b *testing.B) {
	var text strings.Builder
	for i := range 1000 {
		text.WriteString("---\n# Source: bench/templates/objects.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bench-")
		text.WriteString(strings.Repeat("x", i%7))
		text.WriteString("\n  labels:\n    app: bench\ndata:\n  key: value\n  other: |\n    line one\n    line two\n")
	}
	s := text.String()
	b.Run("helm", func(b *testing.B) {
		for b.Loop() {
			helmSplit(s)
		}
	})
	b.Run("provider", func(b *testing.B) {
		for b.Loop() {
			splitTemplateOutput(s)
		}
	})
}
