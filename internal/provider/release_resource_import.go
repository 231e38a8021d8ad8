package provider

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	release "helm.sh/helm/v4/pkg/release/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// importedPrivateKey is the private state entry an import writes: the refresh that follows
// reads the release without its configuration, which alone says which values are sensitive.
const importedPrivateKey = "imported"

// markImported records in private that the release is being imported.
func markImported(ctx context.Context, private privateSetter) diag.Diagnostics {
	return private.SetKey(ctx, importedPrivateKey, []byte("true"))
}

// wasImported reports whether private holds the mark of an import not refreshed yet.
func wasImported(ctx context.Context, private privateGetter) bool {
	if private == nil {
		return false
	}
	data, diags := private.GetKey(ctx, importedPrivateKey)
	return !diags.HasError() && string(data) == "true"
}

// clearImported removes the mark of an import from private, once the refresh has recorded how
// the imported release's manifests are redacted.
func clearImported(ctx context.Context, private privateSetter) diag.Diagnostics {
	return private.SetKey(ctx, importedPrivateKey, nil)
}

// importRedactor returns the redactor of the manifests of an imported release, and records in
// rec that they are conservative: it takes every value Helm recorded as given to the release
// (rel.Config) for a sensitive input, and renders the chart Helm recorded again with
// substitutes for them (chart.RedactRecorded), so that no form of a set_sensitive value the
// chart derives shows, whatever the chart made of it. rec.Digests are those of the recorded
// rendering, which the first plan with the configuration compares with (see
// manifest.KeepConservative). A release given no values needs nothing: it returns nil.
func (r *releaseResource) importRedactor(ctx context.Context, env *renderEnv, state *releaseModel, rel *release.Release, rec *manifest.RedactionRecord, diags *diag.Diagnostics) *manifest.Redactor {
	if len(rel.Config) == 0 || rel.Chart == nil {
		return nil
	}
	id := state.releaseID()
	inputs := chart.RecordedInputs(rel.Config)
	fallback := func(reason string) *manifest.Redactor {
		// What the chart derives from the given values cannot be found without rendering it
		// again, so every string of the recorded objects but their names is hidden whole.
		objs, err := recordedObjects(rel)
		if err != nil {
			objs = nil // the given values alone are hidden, and the digests stay unknown
		}
		redactor := manifest.NewKeyedRedactor(inputs, rec.Key, manifest.EveryString(rec.Key, objs))
		if objs != nil {
			if digests, err := redactor.ObjectDigests(objs, state.Namespace.ValueString(), env.isNamespaced, rec.Key); err == nil {
				rec.Digests, rec.Conservative = digests, true
			}
		}
		diags.AddWarning("Imported Manifests Hide Every Value", fmt.Sprintf(
			"The manifests of imported release %s hide every string value of its objects but their names, since which of them its "+
				"chart derives from sensitive values (a password URL-escaped in a connection string, hashed into an annotation) cannot "+
				"be told: %s. The next change applied with the configuration shows the manifests as set_sensitive and values_sensitive "+
				"redact them.",
			id, reason))
		return redactor
	}
	ch, unfrozen := chart.Unfreeze(rel.Chart)
	if !unfrozen {
		return fallback("the chart Helm recorded holds the rendered text only, without its templates")
	}
	if ch.Metadata != nil && len(ch.Metadata.Dependencies) > len(ch.Dependencies()) {
		return fallback("Helm records a chart without its subcharts, so the chart cannot be rendered again")
	}
	namespace := state.Namespace.ValueString()
	options := chart.RenderOptions{
		ReleaseName: state.Name.ValueString(), Namespace: namespace,
		KubeVersion: env.kubeVersion, APIVersions: env.apiVersions,
		IsUpgrade: rel.Version > 1, Revision: rel.Version,
	}
	if env.request.Lookup != nil {
		options.Lookup = env.request.Lookup
	}
	redaction := chart.RedactionOptions{Namespace: namespace, Key: rec.Key, IsNamespaced: env.isNamespaced}
	redacted, err := chart.RedactRecorded(ctx, &chart.Loaded{Chart: ch}, rel.Config, options, helmrelease.Applied(rel), redaction)
	if err != nil {
		// The message may quote a value: only what the given values are is hidden in it.
		tflog.Debug(ctx, "the recorded chart of an imported release could not be redacted", map[string]any{"release": id, "error": manifest.NewRedactor(inputs).String(err.Error())})
		return fallback("rendering the recorded chart with other values failed")
	}
	digests, err := redacted.ObjectDigests(rec.Key, redaction)
	if err != nil {
		return fallback("the recorded chart's objects could not be digested")
	}
	rec.Digests, rec.Conservative = digests, true
	return redacted.Redactor
}

// recordedObjects returns the CRDs, objects and hooks Helm recorded for rel, as a rendering of
// the same gives them.
func recordedObjects(rel *release.Release) ([]manifest.Object, error) {
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
