package chart

import (
	"path"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	release "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/patch"
)

// Freeze returns a copy of l whose templates are files, a rendering of l
// ([Rendered.Files]), as literal text: Helm's install and upgrade render it
// to exactly files, whatever the templates draw at random or look up, so an
// apply applies what its plan rendered. Metadata, values, files, CRDs and
// subcharts stay as they are, so Helm's release records the chart's name,
// version and values as usual; the original templates are kept among the
// files, for [Unfreeze], and so are patches, the patches files holds the output of, for
// [RecordedPatches].
func Freeze(l *Loaded, files map[string]string, patches []patch.Patch) (*Loaded, error) {
	frozen := *l
	frozen.Chart = copyChart(l.Chart)
	freezeTemplates(frozen.Chart, files)
	if err := keepPatches(frozen.Chart, patches); err != nil {
		return nil, err
	}
	return &frozen, nil
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
			out = postRenderSafe(t.Name, out)
			templates = append(templates, &common.File{Name: t.Name, Data: []byte(literalTemplate(out))})
		}
	}
	keepTemplates(ch)
	ch.Templates = templates
	for _, dep := range ch.Dependencies() {
		freezeTemplates(dep, files)
	}
}

// postRenderSafe returns text, the output of the template file, with its documents written as
// the objects Kubernetes reads from them (manifest.RenderRewritable) when any of them may read
// otherwise once
// Helm 4's post-render path has parsed and written it again (manifest.MayChangeWhenRewritten:
// anchors, duplicate keys, a block scalar keeping its trailing newlines; helm#32203). The
// objects are read as fromFiles reads them, as Helm applies them without a post-renderer, so
// the release applies what `helm install` of the chart applies. Test hooks, which no install
// or upgrade post-renders, stay as they are.
func postRenderSafe(file, text string) string {
	if ext := path.Ext(file); ext != ".yaml" && ext != ".yml" && ext != ".json" {
		return text
	}
	hooks, manifests, err := releaseutil.SortManifests(map[string]string{file: text}, nil, releaseutil.InstallOrder)
	if err != nil || !mayChangeWhenRewritten(hooks, manifests) {
		return text
	}
	var docs []string
	for _, m := range manifests {
		objs, err := manifest.SplitDocuments(m.Content + "\n")
		if err != nil {
			return text
		}
		if docs, err = appendRendered(docs, objs); err != nil {
			return text
		}
	}
	for _, h := range hooks {
		if IsTestHook(h) {
			docs = append(docs, hookDocument(h))
			continue
		}
		objs, err := manifest.SplitDocuments(hookDocument(h))
		if err != nil {
			return text
		}
		if docs, err = appendRendered(docs, objs); err != nil {
			return text
		}
	}
	return strings.Join(docs, "---\n")
}

// mayChangeWhenRewritten reports whether a document of the objects or hooks Helm post-renders
// may read otherwise once Helm has written it again.
func mayChangeWhenRewritten(hooks []*release.Hook, manifests []releaseutil.Manifest) bool {
	for _, m := range manifests {
		if manifest.MayChangeWhenRewritten(m.Content) {
			return true
		}
	}
	for _, h := range hooks {
		if !IsTestHook(h) && manifest.MayChangeWhenRewritten(h.Manifest) {
			return true
		}
	}
	return false
}

// appendRendered appends each object to docs as manifest.RenderRewritable writes it.
func appendRendered(docs []string, objs []manifest.Object) ([]string, error) {
	for _, obj := range objs {
		doc, err := manifest.RenderRewritable(obj)
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
	return docs, nil
}

// literalTemplate returns a Go template that outputs text: every "{{" in it
// becomes an action printing "{{".
func literalTemplate(text string) string {
	return strings.ReplaceAll(text, "{{", `{{"{{"}}`)
}
