package chart

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"text/template"

	"helm.sh/helm/v4/pkg/chart/common"
	commonutil "helm.sh/helm/v4/pkg/chart/common/util"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	release "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/draw"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/patch"
)

// notesFileSuffix names the template Helm prints after an install instead
// of applying it.
const notesFileSuffix = "NOTES.txt"

// RenderOptions are what .Release and .Capabilities hold while rendering.
type RenderOptions struct {
	ReleaseName string
	Namespace   string
	// KubeVersion is the cluster's version ("v1.37.2", the server's
	// gitVersion); empty means Helm's default.
	KubeVersion string
	// APIVersions, when set, is the complete .Capabilities.APIVersions, as
	// Helm reads it from the cluster's discovery (action.GetVersionSet).
	// Empty means Helm's default set, [DefaultAPIVersions].
	APIVersions []string
	// IsUpgrade renders as helm upgrade does (.Release.IsUpgrade); else as
	// helm install (.Release.IsInstall).
	IsUpgrade bool
	// Revision is .Release.Revision: 1 for an install, the last revision
	// plus one for an upgrade. Zero means 1.
	Revision int
	// Lookup answers the templates' lookup function; nil answers every
	// lookup with nothing, as helm template does.
	Lookup Objects
	// Seed is the release's own secret seed that templates draw from (see
	// [RenderStable] and package draw); nil draws from a seed of the
	// rendering's own, so another rendering draws differently.
	Seed []byte
	// Patches change the templates' output, hooks included, before it is
	// read (see patchFiles): every rendering, those that find drawn and
	// sensitive values too, sees the patched objects.
	Patches *patch.Set
}

// StandIns are, by the SHA-256 of a value no seed determines (draw.StandInKey), the call whose
// placeholder a traced rendering wrote for it.
type StandIns = map[string]draw.StandIn

// Rendered is a chart rendered as Helm's install or upgrade would render it.
type Rendered struct {
	// Objects are the objects Helm applies, in Helm's install order.
	Objects []manifest.Object
	// Hooks are the hook objects (helm.sh/hook annotation), in Helm's kind
	// order; Helm runs them by event and weight.
	Hooks []manifest.Object
	// TestHooks are the objects of the test hooks, which install and upgrade do not run: a
	// plan neither shows nor applies them, but hides the values of their Secrets wherever
	// they occur, as it hides those of the other Secrets.
	TestHooks []manifest.Object
	// CRDs are the objects in the crds/ directories of the chart and its
	// subcharts, which Helm creates before anything else on install.
	CRDs []manifest.Object
	// Manifest is the text Helm hands to a post-renderer and stores in the
	// release: "---\n# Source: <file>\n<document>\n" per object, in install
	// order, without hooks and CRDs.
	Manifest string
	// Notes is the rendered NOTES.txt of the top chart. It may contain
	// sensitive values.
	Notes string
	// ObjectSources, HookSources, TestHookSources and CRDSources name the chart
	// file each of Objects, Hooks, TestHooks and CRDs comes from, by index
	// ("web/templates/deployment.yaml").
	ObjectSources, HookSources, TestHookSources, CRDSources []string
	// Files is the output of every template, keyed by its path in the chart
	// ("web/templates/secret.yaml", "web/charts/db/templates/..."), NOTES.txt
	// and test hooks included: what [Freeze] turns back into a chart that
	// renders exactly this.
	Files map[string]string
	// Generated are the objects holding values the chart generated in this
	// rendering (randAlphaNum, uuidv4, genCA, now...) with no earlier
	// revision to take them from, see [RenderStable].
	Generated []manifest.Object
	// StandIns are, by the SHA-256 of each value no seed determines that the rendering holds
	// (draw.StandInKey), the call whose placeholder a traced rendering wrote for it: what a later
	// rendering given the value back (a CA read back with lookup and buildCustomCert) writes in
	// a traced rendering, so that what is made from it traces alike (Prior.StandIns).
	StandIns StandIns
	// NamesGenerated is set when a generated value names an object, so the
	// set of objects itself differs from one rendering to the next.
	NamesGenerated bool
	// Varying are the Files whose output differed between two renderings:
	// what a later rendering takes generated values from.
	Varying []string
	// Traces are the traces of the drawn values by place, for the next
	// rendering's [Prior]: what tells a value drawn from the same inputs.
	Traces map[string]string

	// drawing and pass are how the rendering was made, to render again
	// alike with other values.
	drawing *drawing
	pass    *pass
}

// DefaultKubeVersion is .Capabilities.KubeVersion when neither the configuration nor a
// cluster gives one: Helm 3's default, which every plan without either rendered with. Helm 4's
// own default is the Kubernetes version of its client libraries (1.20 in test binaries), so
// it would change such plans with each upgrade of the libraries, and differ in tests.
const DefaultKubeVersion = "v1.20.0"

// DefaultAPIVersions returns Helm's default .Capabilities.APIVersions, the
// API versions compiled into Helm, for rendering without a cluster.
func DefaultAPIVersions() []string {
	return append([]string(nil), common.DefaultVersionSet...)
}

// Render renders l with values, offline: no cluster is contacted, lookup
// returns an empty result unless o.Lookup answers it, and nothing but the
// chart, values and o goes in.
// Template errors keep Helm's "template: <chart>/templates/<file>:<line>"
// position; other errors name the file they come from. values is not
// changed, nor is l, so one Loaded renders any number of times.
func Render(ctx context.Context, l *Loaded, values map[string]any, o RenderOptions) (*Rendered, error) {
	d := newDrawing(o)
	ch, files, err := renderChart(ctx, l, values, o, d.funcs(ctx, d.session.Rendering(d.seed, draw.Applied), d.lookups.round(nil)))
	if err != nil {
		return nil, err
	}
	return fromFiles(ch, files)
}

// renderChart runs Helm's engine on a copy of l's chart, its dependencies
// processed with values, and returns that copy with the templates' output.
// funcs replace Helm's template functions of the same names.
func renderChart(ctx context.Context, l *Loaded, values map[string]any, o RenderOptions, funcs template.FuncMap) (*helmchart.Chart, map[string]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if err := ValidateReleaseName(o.ReleaseName); err != nil {
		return nil, nil, err
	}
	caps, err := capabilities(o)
	if err != nil {
		return nil, nil, err
	}
	ch := copyChart(l.Chart)
	name := ch.Name()
	if constraint := ch.Metadata.KubeVersion; constraint != "" && !chartutil.IsCompatibleRange(constraint, caps.KubeVersion.String()) {
		return nil, nil, fmt.Errorf("chart %s requires kubeVersion %s, which Kubernetes %s does not satisfy", name, constraint, caps.KubeVersion.String())
	}

	vals := map[string]any{}
	if values != nil {
		vals = copyMap(values)
	}
	if err := chartutil.ProcessDependencies(ch, vals); err != nil {
		return nil, nil, fmt.Errorf("chart %s: dependencies: %w", name, err)
	}
	revision := o.Revision
	if revision == 0 {
		revision = 1
	}
	releaseOptions := common.ReleaseOptions{
		Name:      o.ReleaseName,
		Namespace: o.Namespace,
		Revision:  revision,
		IsUpgrade: o.IsUpgrade,
		IsInstall: !o.IsUpgrade,
	}
	renderValues, err := commonutil.ToRenderValuesWithSchemaValidation(ch, vals, releaseOptions, caps, false)
	if err != nil {
		return nil, nil, fmt.Errorf("chart %s: values: %w", name, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}

	files, err := runEngine(ctx, ch, renderValues, funcs)
	if err != nil {
		return nil, nil, fmt.Errorf("render chart %s: %w", name, err)
	}
	if files, err = patchFiles(files, o.Patches, o.Namespace); err != nil {
		return nil, nil, fmt.Errorf("patch chart %s: %w", name, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return ch, files, nil
}

// runEngine is renderTemplates; a variable so that a benchmark counts the renderings a plan
// makes.
var runEngine = renderTemplates

// renderTemplates runs Helm's engine with funcs in place of its own.
func renderTemplates(ctx context.Context, ch *helmchart.Chart, values common.Values, funcs template.FuncMap) (map[string]string, error) {
	return engine.Engine{CustomTemplateFuncs: funcs}.RenderWithContext(ctx, ch, values)
}

// fromFiles sorts the templates' output as Helm's install does into
// objects, hooks and CRDs. Test hooks (helm.sh/hook: test) only run with
// helm test, never on install or upgrade, so they stay in Files alone.
func fromFiles(ch *helmchart.Chart, files map[string]string) (*Rendered, error) {
	name := ch.Name()
	out := &Rendered{Files: make(map[string]string, len(files))}
	for file, content := range files {
		out.Files[file] = content
	}
	out.Notes = takeNotes(files, name)
	// The templates' documents are parsed while they are sorted, exactly as Helm writes each
	// into the release manifest it applies, newline included (a "|" block scalar ending a
	// template keeps its final newline); the errors are then read in Helm's order.
	hooks, manifests, parsed, errs, err := sortManifests(files)
	if err != nil {
		return nil, fmt.Errorf("render chart %s: %w", name, err)
	}
	var text strings.Builder
	for i, m := range manifests {
		fmt.Fprintf(&text, "---\n# Source: %s\n%s\n", m.Name, m.Content)
		if errs[i] != nil {
			return nil, fmt.Errorf("render chart %s: %s: %w", name, m.Name, errs[i])
		}
		out.Objects = append(out.Objects, parsed[i]...)
		out.ObjectSources = appendSource(out.ObjectSources, m.Name, len(parsed[i]))
	}
	out.Manifest = text.String()

	if err := out.AddHooks(hooks); err != nil {
		return nil, fmt.Errorf("render chart %s: %w", name, err)
	}

	for _, crd := range ch.CRDObjects() {
		objs, err := manifest.SplitDocuments(string(crd.File.Data))
		if err != nil {
			return nil, fmt.Errorf("chart %s: %s: %w", name, crd.Filename, err)
		}
		out.CRDs = append(out.CRDs, objs...)
		out.CRDSources = appendSource(out.CRDSources, crd.Filename, len(objs))
	}
	return out, nil
}

// appendSource appends file n times, once for each object it held.
// AddHooks parses the manifests of hooks into r: those Helm runs on install and upgrade into
// Hooks and HookSources, those of test hooks into TestHooks.
func (r *Rendered) AddHooks(hooks []*release.Hook) error {
	for _, h := range hooks {
		if h == nil {
			continue
		}
		objs, err := manifest.SplitDocuments(hookDocument(h))
		if err != nil {
			return fmt.Errorf("hook %s: %w", h.Path, err)
		}
		if IsTestHook(h) {
			r.TestHooks = append(r.TestHooks, objs...)
			r.TestHookSources = appendSource(r.TestHookSources, h.Path, len(objs))
			continue
		}
		r.Hooks = append(r.Hooks, objs...)
		r.HookSources = appendSource(r.HookSources, h.Path, len(objs))
	}
	return nil
}

// hookDocument is h's manifest as Helm reads it when it creates the hook: line by line, each
// line ended by a newline, so a "|" block scalar ending a template without one keeps its
// final newline, as it does in the manifest of the release's other objects.
func hookDocument(h *release.Hook) string {
	return strings.TrimSuffix(h.Manifest, "\n") + "\n"
}

func appendSource(sources []string, file string, n int) []string {
	for range n {
		sources = append(sources, file)
	}
	return sources
}

// IsTestHook reports whether h runs only with helm test, never on install or
// upgrade. (Helm skips hooks of unknown events, such as Helm 2's
// test-failure, altogether.)
func IsTestHook(h *release.Hook) bool {
	for _, event := range h.Events {
		if event != release.HookTest {
			return false
		}
	}
	return len(h.Events) > 0
}

// isInstallHookObject reports whether Helm's own sorter makes a hook of obj that runs on an
// install or upgrade: not a test hook (IsTestHook), nor one of events Helm skips altogether.
func isInstallHookObject(obj manifest.Object) bool {
	h := sortedHook(obj)
	return h != nil && !IsTestHook(h)
}

// HookRunsOn reports whether Helm runs obj as a hook on one of events ("pre-install",
// "post-upgrade"...), as its own sorter reads the object's helm.sh/hook annotation.
func HookRunsOn(obj manifest.Object, events ...string) bool {
	h := sortedHook(obj)
	return h != nil && slices.ContainsFunc(h.Events, func(e release.HookEvent) bool { return slices.Contains(events, string(e)) })
}

// sortedHook is the hook Helm's sorter makes of obj, nil when it makes none.
func sortedHook(obj manifest.Object) *release.Hook {
	doc, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	hooks, _, err := releaseutil.SortManifests(map[string]string{"hook.yaml": string(doc)}, nil, releaseutil.InstallOrder)
	if err != nil || len(hooks) != 1 {
		return nil
	}
	return hooks[0]
}

// takeNotes removes every NOTES.txt from files, as Helm does, and returns
// the top chart's.
func takeNotes(files map[string]string, chartName string) string {
	var notes string
	for file, content := range files {
		if strings.HasSuffix(file, notesFileSuffix) {
			if file == path.Join(chartName, "templates", notesFileSuffix) {
				notes = content
			}
			delete(files, file)
		}
	}
	return notes
}

// capabilities builds .Capabilities from o the way Helm's install builds it
// from a cluster.
func capabilities(o RenderOptions) (*common.Capabilities, error) {
	caps := common.DefaultCapabilities.Copy()
	version := o.KubeVersion
	if version == "" {
		version = DefaultKubeVersion
	}
	parsed, err := common.ParseKubeVersion(version)
	if err != nil {
		return nil, fmt.Errorf("kubernetes version %q: %w", version, err)
	}
	caps.KubeVersion = *parsed
	if len(o.APIVersions) > 0 {
		caps.APIVersions = append(common.VersionSet(nil), o.APIVersions...)
	}
	return caps, nil
}

// copyChart copies what processing dependencies changes (the dependency
// lists, their enabled flags and the values), so the caller's chart stays
// as loaded. Templates and files are shared: nothing writes them.
func copyChart(ch *helmchart.Chart) *helmchart.Chart {
	out := *ch
	if ch.Metadata != nil {
		metadata := *ch.Metadata
		metadata.Dependencies = make([]*helmchart.Dependency, len(ch.Metadata.Dependencies))
		for i, dep := range ch.Metadata.Dependencies {
			d := *dep
			d.Tags = append([]string(nil), dep.Tags...)
			d.ImportValues = append([]any(nil), dep.ImportValues...)
			metadata.Dependencies[i] = &d
		}
		if ch.Metadata.Dependencies == nil {
			metadata.Dependencies = nil
		}
		out.Metadata = &metadata
	}
	if ch.Values != nil {
		out.Values = copyMap(ch.Values)
	}
	deps := make([]*helmchart.Chart, len(ch.Dependencies()))
	for i, dep := range ch.Dependencies() {
		deps[i] = copyChart(dep)
	}
	out.SetDependencies(deps...)
	return &out
}

// copyMap deep-copies a values tree.
func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for key, elem := range m {
		out[key] = copyValue(elem)
	}
	return out
}

// copyValue deep-copies the maps and slices of a value in a values tree.
func copyValue(value any) any {
	switch v := value.(type) {
	case map[string]any:
		return copyMap(v)
	case common.Values:
		return copyMap(v)
	case []any:
		out := make([]any, len(v))
		for i, elem := range v {
			out[i] = copyValue(elem)
		}
		return out
	default:
		return value
	}
}
