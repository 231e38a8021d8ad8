package chart

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	"sigs.k8s.io/yaml"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/patch"
)

// templatesKeptDir is where a frozen chart keeps its original templates among its files
// (see [Freeze]), so that a release read back from Helm's record can be rendered again from
// its templates, not from the literal text it applied.
const templatesKeptDir = ".gitlabk8s/templates/"

// patchesKeptFile is where a frozen chart keeps, as JSON, the patches its templates' output
// was patched with (see [Freeze]): an import reads the release without its configuration, and
// renders it again as it was applied only with them.
const patchesKeptFile = ".gitlabk8s/patches.json"

// keepPatches puts patches among the files of ch, in place of any kept before.
func keepPatches(ch *helmchart.Chart, patches []patch.Patch) error {
	ch.Files = slices.DeleteFunc(slices.Clone(ch.Files), func(f *common.File) bool { return f != nil && f.Name == patchesKeptFile })
	if len(patches) == 0 {
		return nil
	}
	data, err := json.Marshal(patches)
	if err != nil {
		return fmt.Errorf("encode the release's patches: %w", err)
	}
	ch.Files = append(ch.Files, &common.File{Name: patchesKeptFile, Data: data})
	return nil
}

// RecordedPatches returns the patches the chart Helm recorded for a release was frozen with,
// none for a chart frozen without, or installed by Helm itself.
func RecordedPatches(ch *helmchart.Chart) ([]patch.Patch, error) {
	for _, f := range ch.Files {
		if f == nil || f.Name != patchesKeptFile {
			continue
		}
		var patches []patch.Patch
		if err := json.Unmarshal(f.Data, &patches); err != nil {
			return nil, fmt.Errorf("read the recorded patches: %w", err)
		}
		return patches, nil
	}
	return nil, nil
}

// keepTemplates adds the templates of ch to its files under templatesKeptDir.
func keepTemplates(ch *helmchart.Chart) {
	files := make([]*common.File, 0, len(ch.Files)+len(ch.Templates))
	for _, f := range ch.Files {
		if f != nil && !strings.HasPrefix(f.Name, templatesKeptDir) {
			files = append(files, f)
		}
	}
	for _, t := range ch.Templates {
		if t != nil {
			files = append(files, &common.File{Name: templatesKeptDir + t.Name, Data: t.Data})
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
	var templates []*common.File
	var files []*common.File
	for _, f := range ch.Files {
		if f == nil {
			continue
		}
		if name, ok := strings.CutPrefix(f.Name, templatesKeptDir); ok {
			templates = append(templates, &common.File{Name: name, Data: f.Data})
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
func isLiteral(templates []*common.File) bool {
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
//
// A value that decides what the chart renders (an "architecture: replication" that adds
// objects), rather than only what it writes, cannot be replaced without changing the objects:
// such values are found one by one and taken as they are, the others still for sensitive.
func RedactRecorded(ctx context.Context, l *Loaded, config map[string]any, o RenderOptions, prior []Document, red RedactionOptions) (*RedactedRendering, error) {
	out, err := redactRecorded(ctx, l, nil, config, o, prior, red)
	if !errors.Is(err, ErrRedaction) {
		return out, err
	}
	deciding, rest, err := decidingValues(ctx, l, config, o)
	if err != nil {
		return nil, err
	}
	return redactRecorded(ctx, l, deciding, rest, o, prior, red)
}

// redactRecorded is RedactRecorded with the values split into those taken as they are
// (plain) and those taken for sensitive inputs.
func redactRecorded(ctx context.Context, l *Loaded, plain, sensitive map[string]any, o RenderOptions, prior []Document, red RedactionOptions) (*RedactedRendering, error) {
	var v Values
	for docs, values := range map[*[]string]map[string]any{&v.Documents: plain, &v.SensitiveDocuments: sensitive} {
		if len(values) == 0 {
			continue
		}
		doc, err := yaml.Marshal(values)
		if err != nil {
			return nil, fmt.Errorf("encode the release's values: %w", err)
		}
		*docs = []string{string(doc)}
	}
	values, err := MergeValues(v)
	if err != nil {
		return nil, err
	}
	rendered, err := RenderStable(ctx, l, values, o, Prior{Documents: prior})
	if err != nil {
		return nil, err
	}
	return RedactStable(ctx, l, v, o, rendered, red)
}

// decidingValues splits config into the values that change which objects, keys or list items
// the chart renders when each alone is replaced by a substitute (or make it fail), and the
// rest. A list is one value.
func decidingValues(ctx context.Context, l *Loaded, config map[string]any, o RenderOptions) (deciding, rest map[string]any, err error) {
	real, err := Render(ctx, l, copyMap(config), o)
	if err != nil {
		return nil, nil, err
	}
	same, err := Render(ctx, l, copyMap(config), o)
	if err != nil {
		return nil, nil, err
	}
	deciding, rest = map[string]any{}, map[string]any{}
	var walk func(values map[string]any, path []string)
	walk = func(values map[string]any, path []string) {
		for _, k := range slices.Sorted(maps.Keys(values)) {
			at := append(slices.Clone(path), k)
			if m, ok := values[k].(map[string]any); ok && len(m) > 0 {
				walk(m, at)
				continue
			}
			alt := copyMap(config)
			setPath(alt, at, substituteLeaves(values[k], 0))
			into := rest
			if r, renderErr := Render(ctx, l, alt, o); renderErr != nil {
				into = deciding
			} else if _, findErr := manifest.FindDerived(real.allObjects(), same.allObjects(), r.allObjects()); findErr != nil {
				into = deciding
			}
			setPath(into, at, values[k])
		}
	}
	walk(config, nil)
	return deciding, rest, ctx.Err()
}

// setPath sets the value at path in values, making the maps on the way.
func setPath(values map[string]any, path []string, value any) {
	for _, k := range path[:len(path)-1] {
		next, ok := values[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			values[k] = next
		}
		values = next
	}
	values[path[len(path)-1]] = value
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
