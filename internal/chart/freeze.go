package chart

import (
	"path"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"
)

// Freeze returns a copy of l whose templates are files, a rendering of l
// ([Rendered.Files]), as literal text: Helm's install and upgrade render it
// to exactly files, whatever the templates draw at random or look up, so an
// apply applies what its plan rendered. Metadata, values, files, CRDs and
// subcharts stay as they are, so Helm's release records the chart's name,
// version and values as usual; the original templates are kept among the
// files, for [Unfreeze].
func Freeze(l *Loaded, files map[string]string) *Loaded {
	frozen := *l
	frozen.Chart = copyChart(l.Chart)
	freezeTemplates(frozen.Chart, files)
	return &frozen
}

// freezeTemplates replaces the templates of ch and its subcharts by their
// output in files, keyed as Helm's engine keys them. Templates with no
// output (partials, disabled subcharts) are dropped.
func freezeTemplates(ch *helmchart.Chart, files map[string]string) {
	var templates []*common.File
	for _, t := range ch.Templates {
		if t == nil {
			continue
		}
		if out, ok := files[path.Join(ch.ChartFullPath(), t.Name)]; ok {
			templates = append(templates, &common.File{Name: t.Name, Data: []byte(literalTemplate(out))})
		}
	}
	keepTemplates(ch)
	ch.Templates = templates
	for _, dep := range ch.Dependencies() {
		freezeTemplates(dep, files)
	}
}

// literalTemplate returns a Go template that outputs text: every "{{" in it
// becomes an action printing "{{".
func literalTemplate(text string) string {
	return strings.ReplaceAll(text, "{{", `{{"{{"}}`)
}
