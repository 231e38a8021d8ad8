package release

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"

	helmv1 "helm.sh/helm/v4/pkg/release/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/drift"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/patch"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// Inputs are what a release is rendered from: the configuration and what the release keeps
// between runs.
type Inputs struct {
	Namespace, Name string
	Chart           chart.Source
	// Values are the values as configured, the sensitive ones among them.
	Values chart.Values
	// Capabilities are the cluster's, or the provider configuration's in their place.
	Capabilities Capabilities
	// Redactor hides the sensitive values (and the repository password) in error messages;
	// each rendering replaces it with its own, which knows what the chart derived from them.
	Redactor *manifest.Redactor
	// OnRedactor, when set, is handed every redactor that replaces Redactor, at once, so that
	// what logs while the request goes on (Helm, during an apply) hides what it hides.
	OnRedactor func(*manifest.Redactor)
	// RedactionRecord is the release's stored redaction record: its markers' key, nil before the
	// release has one, and the digests of the objects last applied.
	RedactionRecord manifest.RedactionRecord
	// Generated is what the release's renderings draw from and what its last apply drew.
	Generated Generated
	// Imported says the release was imported and not refreshed since: its import recorded
	// so, as the refresh that follows reads it without its configuration, which alone says
	// which values are sensitive.
	Imported bool
	// Ignore are the differences from the chart's objects a refresh leaves out of the live
	// manifests (ignore_differences).
	Ignore []drift.Ignore
	// Patches change the rendered objects, hooks included (package patch).
	Patches []patch.Patch
	// TakeOwnership takes over a deployed release that the state does not record, and
	// objects without an owner (take_ownership).
	TakeOwnership bool
	// Definitions are the CustomResourceDefinitions of other releases the chart's objects may
	// be of (crds_from): checked against at plan, established before the apply.
	Definitions []validate.Object
	// ReplaceDefinitions applies the chart's crds/ definitions before the install or upgrade
	// (crd_policy create_replace): the plan checks they drop no stored version.
	ReplaceDefinitions bool
	// RunTests runs the chart's test hooks after a successful apply: the plan evaluates their
	// pods too.
	RunTests bool
	// PodSecurity is the Pod Security level the plan of the release's environment sets on its
	// namespace, which the apply sets before it applies the release; nil when that plan leaves
	// the namespace's level and policy version as they are.
	PodSecurity *PlannedLevel
}

// PlannedLevel is the Pod Security level a plan sets on a namespace (its enforce label), empty
// when the plan removes the label, and the policy version it is evaluated at (the
// enforce-version label), empty for the latest.
type PlannedLevel struct {
	Enforce, Version string
}

// Capabilities are what a chart sees of its cluster.
type Capabilities struct {
	KubeVersion  string
	APIVersions  []string
	IsNamespaced func(apiVersion, kind string) bool
}

// Generated is what a release's renderings draw from and what its last apply drew.
type Generated struct {
	// Seed is the release's own seed, which its templates draw from (package draw): drawn by
	// the first apply, kept from then on. A plan before it exists cannot show drawn values.
	Seed []byte `json:"seed,omitempty"`
	// Traces are the traces of the values the last apply drew, by place (chart.Rendered.Traces):
	// empty, and recorded as such, when it drew nothing; nil when no apply of this provider
	// recorded them (chart.Prior).
	Traces map[string]string `json:"traces"`
	// Documents are the outputs of the last apply's templates that draw, for a plan that cannot
	// read the release from the cluster.
	Documents []chart.Document `json:"documents,omitempty"`
	// StandIns are what stood in for the keys and certificates the last apply drew, in its
	// traced rendering (chart.Rendered.StandIns).
	StandIns chart.StandIns `json:"stand_ins,omitempty"`
}

// WithSeed returns g with a seed, drawing one when it has none.
func (g Generated) WithSeed() (Generated, error) {
	if g.Seed != nil {
		return g, nil
	}
	g.Seed = make([]byte, 32)
	if _, err := rand.Read(g.Seed); err != nil {
		return g, fmt.Errorf("draw the seed of the values the chart draws: %w", err)
	}
	return g, nil
}

// Step names where a rendering failed.
type Step string

const (
	StepLoad      Step = "load"      // the chart could not be loaded
	StepValues    Step = "values"    // the values could not be merged
	StepRender    Step = "render"    // Helm could not render the chart
	StepPatch     Step = "patch"     // a patch is invalid, fails, or selects nothing: Err is a *patch.Error
	StepRedact    Step = "redact"    // what derives from sensitive values could not be found
	StepManifests Step = "manifests" // the rendered objects cannot be applied
)

// RenderError is a rendering that failed. Err's message is redacted at StepRender, where the
// chart's own error may quote what a template derived from a sensitive value.
type RenderError struct {
	Step Step
	// Chart and Version name the loaded chart, after StepValues.
	Chart, Version string
	Err            error
}

func (e *RenderError) Error() string { return fmt.Sprintf("%s chart: %v", e.Step, e.Err) }
func (e *RenderError) Unwrap() error { return e.Err }

// loadedChart is the chart a request loaded and the values merged for it, once.
type loadedChart struct {
	chart  *chart.Loaded
	values map[string]any
	err    error
}

// load loads the chart and merges the values, once per request.
func (r *Request) load(ctx context.Context) (*loadedChart, error) {
	if r.loaded != nil {
		return r.loaded, r.loaded.err
	}
	r.loaded = &loadedChart{}
	r.loaded.chart, r.loaded.err = chart.Load(ctx, r.Chart)
	if r.loaded.err != nil {
		r.loaded.err = &RenderError{Step: StepLoad, Err: r.loaded.err}
		return r.loaded, r.loaded.err
	}
	if r.loaded.values, r.loaded.err = chart.MergeValues(r.Values); r.loaded.err != nil {
		r.loaded.err = &RenderError{Step: StepValues, Err: r.loaded.err}
	}
	return r.loaded, r.loaded.err
}

// Load loads the chart and merges the values, or says why not.
func (r *Request) Load(ctx context.Context) (*chart.Loaded, error) {
	l, err := r.load(ctx)
	return l.chart, err
}

// Prior returns what the release applied last, which a rendering keeps drawn values from:
// the documents Helm recorded when the history was read, else those the last apply kept in
// the Generated record, with its traces; without traces (a release Helm applied, taken over or
// imported), the chart and values Helm recorded, which the rendering traces instead.
func (r *Request) Prior() chart.Prior {
	prior := chart.Prior{Documents: r.Generated.Documents, Traces: r.Generated.Traces, StandIns: r.Generated.StandIns}
	if !r.History.Read {
		return prior
	}
	last, err := r.History.Last(r.Namespace, r.Name)
	switch {
	case err == nil:
		prior.Documents = r.appliedOf(last)
		if prior.Traces == nil && last.Chart != nil {
			prior.Recorded, _ = recordedRendering(last)
		}
	case errors.Is(err, helmrelease.ErrNotFound):
		prior.Documents = nil
	}
	return prior
}

// appliedOf returns the documents last applied (helmrelease.Applied), split once per request
// and revision: Helm's splitter takes tens of milliseconds over a large release's manifest,
// and a plan renders twice.
func (r *Request) appliedOf(last *helmv1.Release) []chart.Document {
	if r.lastApplied.of != last || last == nil {
		r.lastApplied.of, r.lastApplied.documents = last, helmrelease.Applied(last)
	}
	return r.lastApplied.documents
}

// Rendering is the chart rendered for the release, with the manifests a plan shows.
type Rendering struct {
	Loaded *chart.Loaded
	// Values are the merged values.
	Values  map[string]any
	Options chart.RenderOptions
	// Rendered is the rendering as it is, drawn values and sensitive values in it.
	Rendered *chart.Rendered
	// Redacted hides what the rendering derives from sensitive values; RedactionOptions are
	// what it was redacted with.
	Redacted         *chart.RedactedRendering
	RedactionOptions chart.RedactionOptions
	// Manifests are what a plan shows, by key.
	Manifests map[string]string
	// Generated are the keys of the objects holding values the chart generated afresh.
	Generated []string
	// Conservative says that Manifests are an imported release's, redacted conservatively,
	// kept as nothing changed (see Inputs.importedManifests).
	Conservative bool
}

// Render renders the release for target, drawing from the release's seed and keeping drawn
// values from what it applied last (chart.RenderStable), and redacts it (chart.RedactStable).
// Every rendering of a request shares its lookup answers.
func (r *Request) Render(ctx context.Context, target helmrelease.Target) (*Rendering, error) {
	l, err := r.load(ctx)
	if err != nil {
		return nil, err
	}
	out := &Rendering{Loaded: l.chart, Values: l.values}
	failed := func(step Step, err error) error {
		return &RenderError{Step: step, Chart: l.chart.Chart.Name(), Version: l.chart.Version, Err: err}
	}
	patches, err := patch.Parse(r.Patches)
	if err != nil {
		return nil, failed(StepPatch, err)
	}
	out.Options = chart.RenderOptions{
		ReleaseName: r.Name, Namespace: r.Namespace,
		KubeVersion: r.Capabilities.KubeVersion, APIVersions: r.Capabilities.APIVersions,
		IsUpgrade: target.IsUpgrade, Revision: target.Revision, Seed: r.Generated.Seed,
		Lookup: r.Lookup, Patches: patches,
	}
	if out.Rendered, err = chart.RenderStable(ctx, l.chart, l.values, out.Options, r.Prior()); err != nil {
		if perr, ok := errors.AsType[*patch.Error](err); ok {
			// What an object held when a patch failed on it may derive from a sensitive value.
			return nil, failed(StepPatch, &patch.Error{Index: perr.Index, Err: redactedError{perr.Err, r.Redactor}})
		}
		return nil, failed(StepRender, errors.New(chart.RedactRenderError(ctx, l.chart, r.Values, out.Options, err, r.Redactor)))
	}
	out.RedactionOptions = chart.RedactionOptions{Namespace: r.Namespace, IsNamespaced: r.Capabilities.IsNamespaced, Key: r.RedactionRecord.Key}
	if p := r.Chart.Password; p != "" {
		out.RedactionOptions.Sensitive = []string{p}
	}
	out.Redacted, err = chart.RedactStable(ctx, l.chart, r.Values, out.Options, out.Rendered, out.RedactionOptions)
	switch {
	case errors.Is(err, chart.ErrRedaction):
		return nil, failed(StepRedact, err)
	case err != nil:
		return nil, failed(StepManifests, err)
	}
	out.Manifests = out.Redacted.Manifests
	r.setRedactor(out.Redacted.Redactor)
	out.Generated = generatedKeys(out.Rendered, r.Namespace, r.Capabilities.IsNamespaced)
	return out, nil
}

// redactedError is err with its message redacted, still wrapping err for errors.Is.
type redactedError struct {
	err      error
	redactor *manifest.Redactor
}

func (e redactedError) Error() string { return e.redactor.String(e.err.Error()) }
func (e redactedError) Unwrap() error { return e.err }

// generatedKeys returns the keys of the objects of rendered that hold values the chart
// generated afresh, which a plan cannot show.
func generatedKeys(rendered *chart.Rendered, namespace string, isNamespaced func(apiVersion, kind string) bool) []string {
	keys, err := manifest.Keys(rendered.Generated, namespace, isNamespaced)
	if err != nil {
		return nil // the rendering's own manifests already passed the same check
	}
	return slices.Sorted(maps.Keys(keys))
}

// importedManifests reports whether the release's manifests are an import's, redacted
// conservatively as which inputs are sensitive is not known without the configuration: its
// import said so and no refresh has read it since (Imported), or its redaction record says
// so, which it does until a change writes them as the configuration redacts them.
func (in Inputs) importedManifests() bool {
	return in.Imported || in.RedactionRecord.Conservative
}

// keepUnchanged makes the manifests of rendering what a plan over previous (a state's
// manifests) shows: an object that did not change since previous was written keeps its
// manifest there, whose markers may have been written before the release had its key (see
// manifest.KeepUnchanged), and an imported release (importedManifests) keeps its conservative
// manifests while nothing changes.
func (r *Request) keepUnchanged(rendering *Rendering, previous map[string]string) {
	if len(previous) == 0 {
		return
	}
	rec := r.RedactionRecord
	// digestsOf are the digests of the objects wanted accepts, all of them when it is nil.
	digestsOf := func(wanted func(key string) bool) map[string]string {
		if rec.Key == nil || len(rec.Digests) == 0 {
			return nil
		}
		digests, _ := rendering.Redacted.ObjectDigestsOf(rec.Key, rendering.RedactionOptions, wanted)
		return digests
	}
	if r.importedManifests() {
		// The first change shows every object as this rendering redacts it.
		kept := manifest.KeepConservative(rendering.Manifests, previous, digestsOf(nil), rec.Digests)
		rendering.Conservative = !maps.Equal(kept, rendering.Manifests)
		rendering.Manifests = kept
		return
	}
	// Only an object shown otherwise than before, with a digest recorded, may keep its manifest:
	// the others' digests are not needed, nor any when there is none such.
	shownOtherwise := map[string]bool{}
	for key, now := range rendering.Manifests {
		before, ok := previous[key]
		if _, recorded := rec.Digests[key]; ok && recorded && before != now {
			shownOtherwise[key] = true
		}
	}
	var digests map[string]string
	if len(shownOtherwise) > 0 {
		digests = digestsOf(func(key string) bool { return shownOtherwise[key] })
	}
	rendering.Manifests = manifest.KeepUnchanged(rendering.Manifests, previous, digests, rec.Digests)
}

// Drawn returns the Generated record of r drawn from seed: the traces of its drawn values and
// the outputs of the templates that draw, for the next plan.
func (r *Rendering) Drawn(seed []byte) Generated {
	gen := Generated{Seed: seed, Traces: r.Rendered.Traces, StandIns: r.Rendered.StandIns}
	for _, source := range r.Rendered.Varying {
		gen.Documents = append(gen.Documents, chart.Document{Source: source, Text: r.Rendered.Files[source]})
	}
	return gen
}

// Recorded returns the redaction record the release keeps once r is applied: rec with a key,
// drawn when it has none, and the digests of r's objects.
func (r *Rendering) Recorded(rec manifest.RedactionRecord) (manifest.RedactionRecord, error) {
	if rec.Key == nil {
		key, err := manifest.NewRedactionKey()
		if err != nil {
			return rec, fmt.Errorf("draw the key of the release's markers: %w", err)
		}
		rec.Key = key
	}
	digests, err := r.Redacted.ObjectDigests(rec.Key, r.RedactionOptions)
	if err != nil {
		return rec, fmt.Errorf("digest the applied objects: %s", r.Redacted.Redactor.String(err.Error()))
	}
	// Manifests kept conservative stay so until a change writes them as rendered.
	rec.Digests, rec.Conservative = digests, r.Conservative
	return rec, nil
}

// setRedactor makes redactor the request's, and hands it to OnRedactor.
func (r *Request) setRedactor(redactor *manifest.Redactor) {
	r.Redactor = redactor
	if r.OnRedactor != nil {
		r.OnRedactor(redactor)
	}
}
