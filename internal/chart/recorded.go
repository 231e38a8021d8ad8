package chart

import (
	"context"
	"fmt"
	"strings"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"sigs.k8s.io/yaml"
)

// templatesKeptDir is where a frozen chart keeps its original templates among its files
// (see [Freeze]), so that a release read back from Helm's record can be rendered again from
// its templates, not from the literal text it applied.
const templatesKeptDir = ".gitlabk8s/templates/"

// keepTemplates adds the templates of ch to its files under templatesKeptDir.
func keepTemplates(ch *helmchart.Chart) {
	files := make([]*helmchart.File, 0, len(ch.Files)+len(ch.Templates))
	for _, f := range ch.Files {
		if f != nil && !strings.HasPrefix(f.Name, templatesKeptDir) {
			files = append(files, f)
		}
	}
	for _, t := range ch.Templates {
		if t != nil {
			files = append(files, &helmchart.File{Name: templatesKeptDir + t.Name, Data: t.Data})
		}
	}
	ch.Files = files
}

// Unfreeze returns the chart Helm recorded for a release with the templates [Freeze] kept
// in place of the literal text it rendered, and whether ch was frozen so. A chart installed
// by Helm itself is returned as it is, with true: its templates are its own. A chart frozen
// before templates were kept is returned with false: its templates are literal text, and
// render the same whatever the values.
func Unfreeze(ch *helmchart.Chart) (*helmchart.Chart, bool) {
	out := copyChart(ch)
	return out, unfreezeTemplates(out)
}

func unfreezeTemplates(ch *helmchart.Chart) bool {
	var templates []*helmchart.File
	var files []*helmchart.File
	for _, f := range ch.Files {
		if f == nil {
			continue
		}
		if name, ok := strings.CutPrefix(f.Name, templatesKeptDir); ok {
			templates = append(templates, &helmchart.File{Name: name, Data: f.Data})
			continue
		}
		files = append(files, f)
	}
	ok := true
	switch {
	case templates != nil:
		ch.Templates, ch.Files = templates, files
	case isLiteral(ch.Templates):
		ok = false
	}
	for _, dep := range ch.Dependencies() {
		ok = unfreezeTemplates(dep) && ok
	}
	return ok
}

// isLiteral reports whether templates are what [Freeze] writes: literal text, whose only
// actions print "{{". No templates at all are not.
func isLiteral(templates []*helmchart.File) bool {
	literal := false
	for _, t := range templates {
		if t == nil || strings.HasPrefix(t.Name, "templates/_") {
			continue
		}
		if strings.Contains(strings.ReplaceAll(string(t.Data), `{{"{{"}}`, ""), "{{") {
			return false
		}
		literal = true
	}
	return literal
}

// RedactRecorded renders l, a chart Helm recorded for a release (see [Unfreeze]), with config,
// the values the release was given (Helm's release config: what set, set_sensitive and values
// gave together), taking generated values from prior, what the release applied, and redacts
// the rendering as [RedactStable] does with every leaf of config taken for a sensitive input.
// It is for a release whose sensitive inputs are not known (an imported one): whatever the
// chart derives from any value it was given is hidden, in every form the chart gives it.
func RedactRecorded(ctx context.Context, l *Loaded, config map[string]any, o RenderOptions, prior []Document, red Redaction) (*RedactedRendering, error) {
	doc, err := yaml.Marshal(config)
	if err != nil {
		return nil, fmt.Errorf("encode the release's values: %w", err)
	}
	v := Values{SensitiveDocuments: []string{string(doc)}}
	values, err := MergeValues(v)
	if err != nil {
		return nil, err
	}
	rendered, err := RenderStable(ctx, l, values, o, prior)
	if err != nil {
		return nil, err
	}
	return RedactStable(ctx, l, v, o, rendered, red)
}

// RecordedInputs returns the texts of the leaves of config, as [RedactRecorded] takes them
// for sensitive inputs: what a redactor hides wherever they occur literally or encoded.
func RecordedInputs(config map[string]any) []string {
	doc, err := yaml.Marshal(config)
	if err != nil {
		return nil
	}
	return Values{SensitiveDocuments: []string{string(doc)}}.SensitiveInputs()
}
