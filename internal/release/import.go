package release

import (
	"context"
	"slices"

	helmv1 "helm.sh/helm/v4/pkg/release/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/patch"
)

// importRedactor returns the redactor of the manifests of an imported release, and records in
// rec that they are conservative: it takes every value Helm recorded as given to the release
// (rel.Config) for a sensitive input, and renders the chart Helm recorded again with
// substitutes for them (chart.RedactRecorded), so that no form of a set_sensitive value the
// chart derives shows, whatever the chart made of it. rec.Digests are those of the recorded
// rendering, which the first plan with the configuration compares with (see
// manifest.KeepConservative). A release given no values needs nothing: it returns nil. Where
// the chart cannot be rendered again, every string but the objects' names is hidden, and the
// second result says why.
func (r *Request) importRedactor(ctx context.Context, rel *helmv1.Release, rec *manifest.RedactionRecord) (*manifest.Redactor, *EveryStringHidden) {
	if len(rel.Config) == 0 || rel.Chart == nil {
		return nil, nil
	}
	inputs := chart.RecordedInputs(rel.Config)
	fallback := func(hidden *EveryStringHidden) (*manifest.Redactor, *EveryStringHidden) {
		return r.everyStringRedactor(rel, inputs, rec), hidden
	}
	recorded, reason := recordedRendering(rel)
	if recorded == nil {
		return fallback(&EveryStringHidden{Reason: reason})
	}
	options := chart.RenderOptions{
		ReleaseName: r.Name, Namespace: r.Namespace,
		KubeVersion: r.Capabilities.KubeVersion, APIVersions: r.Capabilities.APIVersions,
		IsUpgrade: rel.Version > 1, Revision: rel.Version, Patches: recorded.Patches,
	}
	if r.Lookup != nil {
		options.Lookup = r.Lookup
	}
	redaction := chart.RedactionOptions{Namespace: r.Namespace, Key: rec.Key, IsNamespaced: r.Capabilities.IsNamespaced}
	redacted, err := chart.RedactRecorded(ctx, recorded.Loaded, rel.Config, options, helmrelease.Applied(rel), redaction)
	if err != nil {
		// The message may quote a value: only what the given values are is hidden in it.
		return fallback(&EveryStringHidden{Reason: "rendering the recorded chart with other values failed", Err: manifest.NewRedactor(inputs, nil, nil).String(err.Error())})
	}
	digests, err := redacted.ObjectDigests(rec.Key, redaction)
	if err != nil {
		return fallback(&EveryStringHidden{Reason: "the recorded chart's objects could not be digested"})
	}
	rec.Digests, rec.Conservative = digests, true
	return redacted.Redactor, nil
}

// everyStringRedactor hides every string of the objects Helm recorded for rel but their
// names, and the given values inputs: what the chart derives from them cannot be found
// without rendering it again. rec records the digests of the recorded objects.
func (r *Request) everyStringRedactor(rel *helmv1.Release, inputs []string, rec *manifest.RedactionRecord) *manifest.Redactor {
	objs, err := recordedObjects(rel)
	if err != nil {
		objs = nil // the given values alone are hidden, and the digests stay unknown
	}
	redactor := manifest.NewRedactor(inputs, rec.Key, manifest.EveryString(rec.Key, objs))
	if objs != nil {
		if digests, err := redactor.ObjectDigests(objs, r.Namespace, r.Capabilities.IsNamespaced, rec.Key); err == nil {
			rec.Digests, rec.Conservative = digests, true
		}
	}
	return redactor
}

// recordedObjects returns the CRDs, objects and hooks Helm recorded for rel, as a rendering of
// the same gives them.
func recordedObjects(rel *helmv1.Release) ([]manifest.Object, error) {
	objs, err := manifest.SplitDocuments(rel.Manifest)
	if err != nil {
		return nil, err
	}
	extras, err := recordedExtras(rel)
	if err != nil {
		return nil, err
	}
	return slices.Concat(extras.CRDs, objs, extras.Hooks), nil
}

// recordedRendering returns the chart, the values and the patches Helm recorded rel was
// rendered and applied with, or, when nil, why the chart cannot render again. rel.Chart is
// not nil.
func recordedRendering(rel *helmv1.Release) (*chart.RecordedRendering, string) {
	ch, unfrozen := chart.Unfreeze(rel.Chart)
	if !unfrozen {
		return nil, "the chart Helm recorded holds the rendered text only, without its templates"
	}
	if ch.Metadata != nil && len(ch.Metadata.Dependencies) > len(ch.Dependencies()) {
		return nil, "Helm records a chart without its subcharts, so the chart cannot be rendered again"
	}
	// The release renders again as it was applied only with the patches it was applied with.
	recordedPatches, err := chart.RecordedPatches(rel.Chart)
	if err != nil {
		return nil, "the patches Helm recorded with the chart cannot be read"
	}
	patches, err := patch.Parse(recordedPatches)
	if err != nil {
		return nil, "the patches Helm recorded with the chart are invalid"
	}
	return &chart.RecordedRendering{Loaded: &chart.Loaded{Chart: ch}, Values: rel.Config, Patches: patches}, ""
}
