package chart

import (
	"strings"
	"unicode"
)

// splitTemplateOutput cuts a template's output, or a release's manifest, into documents
// exactly as Helm's install does (releaseutil.SplitManifests), in their order: at every "---"
// that begins a line, dropping the documents that hold only white space and the white space
// each begins with. Helm finds the separators with a regular expression, (?m)^---[ \t]*, run
// over the whole text: about 30 ms of CPU in a plan of 1000 objects, which cuts the recorded
// manifest and the templates' output. This looks at the start of each line alone; a test
// holds it to Helm's answer.
func splitTemplateOutput(text string) []string {
	text = strings.TrimLeftFunc(text, unicode.IsSpace)
	var docs []string
	add := func(doc string) {
		if strings.TrimSpace(doc) != "" {
			docs = append(docs, strings.TrimLeftFunc(doc, unicode.IsSpace))
		}
	}
	begin := 0
	for line := 0; line < len(text); {
		if strings.HasPrefix(text[line:], "---") {
			add(text[begin:line])
			// The spaces and tabs after it go with the document's leading white space.
			begin = line + len("---")
		}
		next := strings.IndexByte(text[line:], '\n')
		if next < 0 {
			break
		}
		line += next + 1
	}
	add(text[begin:])
	return docs
}
