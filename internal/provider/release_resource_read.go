package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	release "helm.sh/helm/v4/pkg/release/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/drift"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// Read refreshes the release from the cluster: its revision and status from Helm's history,
// and manifests from the live objects, projected onto the fields the chart sets.
func (r *releaseResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state releaseModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := state.releaseID()
	env := r.renderEnvironment(ctx, &state, true, req.Private, &resp.Diagnostics)
	if env == nil {
		return
	}
	rel, err := env.request.History.Last(state.Namespace.ValueString(), state.Name.ValueString())
	if errors.Is(err, helmrelease.ErrNotFound) {
		tflog.Info(ctx, "release "+id+" no longer exists; removing it from the state", map[string]any{"release": id})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Unable to Read Release", fmt.Sprintf("The history of release %s could not be read.\n\n%s", id, redactorFor(&state).String(err.Error())))
		return
	}

	state.ID = types.StringValue(id)
	state.Revision = types.Int64Value(int64(rel.Version))
	state.Status = types.StringValue(string(rel.Info.Status))
	if rel.Chart != nil && rel.Chart.Metadata != nil {
		state.ChartVersion = types.StringValue(rel.Chart.Metadata.Version)
		state.AppVersion = types.StringValue(rel.Chart.Metadata.AppVersion)
	}
	if rel.Info.Status.IsPending() {
		resp.Diagnostics.Append(pendingWarning(id, rel, state.RecoverPending.ValueBool()))
	}
	// A release without a key (an imported one) gets one now; its
	// objects' manifests are written anew with it below.
	// An imported release's manifests are redacted conservatively, as the inputs that are
	// sensitive are not known (see importRedactor).
	// They stay so, redacted the same way at each refresh, until a change writes them as the
	// configuration redacts them.
	rec := env.request.RedactionRecord
	var imported *manifest.Redactor
	if rec.Key == nil || rec.Conservative {
		isImport := rec.Conservative || wasImported(ctx, req.Private)
		var ok bool
		if rec, ok = withKey(rec, &resp.Diagnostics); !ok {
			return
		}
		if isImport {
			imported = r.importRedactor(ctx, env, &state, rel, &rec, &resp.Diagnostics)
		}
		resp.Diagnostics.Append(writeRedactionRecord(ctx, resp.Private, rec)...)
		resp.Diagnostics.Append(clearImported(ctx, resp.Private)...)
	}
	manifests := r.liveManifests(ctx, env, &state, rel, rec, imported, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	state.Manifests = manifests
	state.URLs = urlsOf(state.Manifests)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// liveManifests returns the manifests of the release's live objects: for each object of the
// current revision, the live values of the fields the chart sets; an object that no longer
// exists is left out, so the plan shows it being added again. Hooks and CRDs, which Helm does
// not keep up to date, keep the manifests of the state. imported, when not nil, redacts them
// instead of what the state knows (see importRedactor).
func (r *releaseResource) liveManifests(ctx context.Context, env *renderEnv, state *releaseModel, rel *release.Release, rec manifest.RedactionRecord, imported *manifest.Redactor, diags *diag.Diagnostics) types.Map {
	key := rec.Key
	id := state.releaseID()
	namespace := state.Namespace.ValueString()
	redactor := redactorFor(state)
	desired, err := manifest.SplitDocuments(rel.Manifest)
	if err != nil {
		diags.AddError("Unable to Read Release", fmt.Sprintf("The manifest Helm recorded for release %s revision %d cannot be read.\n\n%s", id, rel.Version, redactor.String(err.Error())))
		return state.Manifests
	}
	live, err := env.client.LiveObjects(ctx, namespace, desired)
	if err != nil {
		diags.AddError("Unable to Read Release Objects", fmt.Sprintf("The live objects of release %s could not be read.\n\n%s", id, redactor.String(err.Error())))
		return state.Manifests
	}
	rules := drift.NewRules(state.ignoreRules(ctx), desired)
	projected := make([]manifest.Object, 0, len(desired))
	for i, obj := range desired {
		if live[i] != nil {
			projected = append(projected, rules.Project(obj, live[i]))
		}
	}
	sensitive := state.sensitiveValues()
	// Only the keys of the recorded objects are needed: they tell objects from hooks and CRDs.
	desiredKeys, err := manifest.NewRedactor(sensitive).Keys(desired, namespace, env.isNamespaced)
	var recordedExtras map[string]string
	if err == nil && len(state.Manifests.Elements()) == 0 {
		// Imported: no earlier plan recorded the release's hooks and CRDs, so take them as Helm
		// recorded them; otherwise the first plan would add them and upgrade for nothing.
		extras := manifest.NewKeyedRedactor(sensitive, key, nil)
		if imported != nil {
			extras = imported
		}
		recordedExtras, err = recordedHooksAndCRDs(rel, namespace, extras, env.isNamespaced)
	}
	if err == nil {
		var liveManifests map[string]string
		live := imported
		if live == nil {
			live = liveRedactor(desired, state, sensitive, key, rec.Conservative, env.isNamespaced)
		}
		state.redactorCell().Store(live)
		if liveManifests, err = chart.RedactedManifests(&chart.Rendered{Objects: projected}, namespace, live, env.isNamespaced); err == nil {
			elems := make(map[string]attr.Value, len(liveManifests)+len(state.Manifests.Elements())+len(recordedExtras))
			for k, v := range liveManifests {
				elems[k] = types.StringValue(v)
			}
			for k, v := range recordedExtras {
				if !desiredKeys[k] {
					elems[k] = types.StringValue(v)
				}
			}
			for k, v := range state.Manifests.Elements() {
				if !desiredKeys[k] {
					elems[k] = v
				}
			}
			out, d := types.MapValue(types.StringType, elems)
			diags.Append(d...)
			tflog.Debug(ctx, "refreshed release objects", map[string]any{"release": id, "objects": len(desired), "missing": len(desired) - len(projected)})
			return out
		}
	}
	diags.AddError("Unable to Read Release Objects", fmt.Sprintf("The live objects of release %s could not be turned into manifests.\n\n%s", id, redactor.String(err.Error())))
	return state.Manifests
}

// recordedHooksAndCRDs returns the manifests of the release's hooks and of its chart's CRDs as
// Helm recorded them for the release's last revision.
func recordedHooksAndCRDs(rel *release.Release, namespace string, redactor *manifest.Redactor, isNamespaced func(apiVersion, kind string) bool) (map[string]string, error) {
	recorded, err := recordedExtras(rel)
	if err != nil || len(recorded.Hooks)+len(recorded.CRDs) == 0 {
		return nil, err
	}
	return chart.RedactedManifests(recorded, namespace, redactor, isNamespaced)
}

// recordedExtras returns the release's hooks (but test hooks) and its chart's CRDs as Helm
// recorded them for the release's last revision.
func recordedExtras(rel *release.Release) (*chart.Rendered, error) {
	var recorded chart.Rendered
	for _, h := range rel.Hooks {
		if chart.IsTestHook(h) {
			continue // plans never show them: install and upgrade do not run them
		}
		objs, err := manifest.SplitDocuments(h.Manifest)
		if err != nil {
			return nil, fmt.Errorf("hook %s: %w", h.Path, err)
		}
		recorded.Hooks = append(recorded.Hooks, objs...)
	}
	if rel.Chart != nil {
		for _, crd := range rel.Chart.CRDObjects() {
			objs, err := manifest.SplitDocuments(string(crd.File.Data))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", crd.Filename, err)
			}
			recorded.CRDs = append(recorded.CRDs, objs...)
		}
	}
	return &recorded, nil
}

// liveRedactor returns the redactor for the live objects of a release: it hides, besides the
// sensitive values, every scalar the state's manifests show as a marker where what Helm
// applied (desired) has a value, so that what the plan found derived from a sensitive value
// stays hidden in the refreshed manifests. Without sensitive chart values, or when the state
// cannot be compared, it hides the sensitive values alone. Markers are keyed with key.
// conservative manifests (an imported release's) are compared without sensitive values too.
func liveRedactor(desired []manifest.Object, state *releaseModel, sensitive []string, key []byte, conservative bool, isNamespaced func(apiVersion, kind string) bool) *manifest.Redactor {
	plain := manifest.NewKeyedRedactor(sensitive, key, nil)
	if !conservative && len(state.SetSensitive.Elements()) == 0 && len(state.ValuesSensitive.Elements()) == 0 {
		return plain
	}
	// Secrets are redacted whole anyway, and their values would be hidden in the others.
	notSecrets := slices.DeleteFunc(slices.Clone(desired), func(obj manifest.Object) bool {
		return obj["kind"] == "Secret" && obj["apiVersion"] == "v1"
	})
	applied, err := manifest.NewRedactor(nil).Manifests(notSecrets, state.Namespace.ValueString(), isNamespaced)
	if err != nil {
		return plain
	}
	recorded, _ := plannedManifests(state.Manifests)
	var real, shown []manifest.Object
	for _, key := range slices.Sorted(maps.Keys(applied)) {
		text, ok := recorded[key]
		if !ok {
			continue
		}
		a, errA := manifest.SplitDocuments(applied[key])
		b, errB := manifest.SplitDocuments(text)
		if errA != nil || errB != nil || len(a) != 1 || len(b) != 1 {
			return plain
		}
		real, shown = append(real, a[0]), append(shown, b[0])
	}
	derived, err := manifest.FindDerived(real, nil, shown)
	if err != nil {
		return plain
	}
	return manifest.NewKeyedRedactor(sensitive, key, derived)
}
