package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
)

// newHelmClient returns a Helm client whose debug messages and wait progress go to tflog,
// with m's sensitive values redacted.
func newHelmClient(ctx context.Context, clients *kube.Clients, m *releaseModel) *helmrelease.Client {
	opts := newReleaseLog(ctx, m).helmOptions()
	opts.BlockedTimeout = m.blockedTimeoutDuration()
	return helmrelease.New(clients, opts)
}

func (r *releaseResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan releaseModel
	resp.Diagnostics.Append(readRelease(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.apply(ctx, &plan, nil, nil, resp.Private, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.setFromManifests()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *releaseResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state releaseModel
	resp.Diagnostics.Append(readRelease(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(readRelease(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !plan.Revision.IsUnknown() {
		// The plan decided (ModifyPlan leaves the revision unknown exactly when the apply
		// installs or upgrades): only settings changed, and what runs in the cluster stays as
		// it is.
		plan.Revision, plan.Status = state.Revision, state.Status
		plan.setFromManifests()
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	r.apply(ctx, &plan, &state, req.Private, resp.Private, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.setFromManifests()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// apply installs or upgrades the release to what plan shows (release.Request.Apply), and
// records the revision, status and the manifests the plan left unknown in plan, and in private
// what the next plan takes generated values from and redacts with. state is nil when creating,
// and so is stored, the private state the release kept (its markers' key, its seed).
func (r *releaseResource) apply(ctx context.Context, plan, state *releaseModel, stored privateGetter, private privateSetter, diags *diag.Diagnostics) {
	id, d := plan.releaseID(), plan.diagnostics()
	recorded := recordedOf(state)
	env := r.renderEnvironment(ctx, plan, recorded, opApply, stored, diags)
	if env == nil {
		return
	}
	shown := shownOf(plan)
	tflog.Info(ctx, "applying release "+id, map[string]any{"release": id})
	done, err := env.request.Apply(ctx, recorded, shown, plan.settings(r.ci()), env.client)
	if done != nil && len(done.Replaced) > 0 {
		tflog.Info(ctx, "release "+id+": replaced (force_replace): "+strings.Join(done.Replaced, ", "), map[string]any{"release": id})
	}
	if done != nil {
		diags.Append(outcomeWarnings(ctx, d, id, done.Outcome)...)
	}
	if failed := (*release.ApplyError)(nil); errors.As(err, &failed) && failed.Step == release.StepRecord {
		// Applied, and what it drew is kept, though the redaction record could not be made.
		diags.Append(writeGenerated(ctx, private, done.Generated, d)...)
	}
	if err != nil {
		diags.Append(applyErrorDiagnostic(plan, state == nil, err))
		return
	}
	diags.Append(writeGenerated(ctx, private, done.Generated, d)...)
	plan.Revision, plan.Status = types.Int64Value(int64(done.Revision)), types.StringValue(string(done.Status))
	if shown.Unknown || len(shown.UnknownKeys) > 0 {
		// What the plan could not show is now known: what was applied.
		manifests, converted := types.MapValueFrom(ctx, types.StringType, done.Manifests)
		diags.Append(converted...)
		plan.Manifests = manifests
	}
	diags.Append(writeRedactionRecord(ctx, private, done.Record, d)...)
	var written map[string]string
	if known, complete := completeManifests(plan.Manifests); complete {
		written = known
	}
	diags.Append(recordTexts(ctx, private, written)...)
	tflog.Info(ctx, "applied release "+id, map[string]any{"release": id, "revision": done.Revision})
}

// settings are how m is applied.
func (m *releaseModel) settings(ci gitlab.CIMetadata) release.Settings {
	return release.Settings{
		Atomic: m.Atomic.ValueBool(), Wait: m.Wait.ValueBool(), Timeout: m.timeoutDuration(),
		MaxHistory:  int(m.MaxHistory.ValueInt64()),
		Description: revisionDescription(m.Description, ci), Labels: gitlab.LedgerLabels(ci),
		RecoverPending: m.RecoverPending.ValueBool(),
		ForceReplace:   m.ForceReplace.ValueBool(),
	}
}

// outcomeWarnings say what Helm's apply did besides the apply: a pending release recovered,
// objects of failed revisions deleted or left.
func outcomeWarnings(ctx context.Context, d releaseDiagnostics, id string, out *helmrelease.Outcome) diag.Diagnostics {
	var diags diag.Diagnostics
	if out == nil {
		return diags
	}
	if out.Recovered.Action != helmrelease.RecoveryNone {
		diags.Append(recoveredWarning(d, id, out.Recovered))
	}
	if len(out.Removed) > 0 {
		tflog.Info(ctx, "release "+id+": deleted objects left by failed revisions: "+strings.Join(out.Removed, ", "), map[string]any{"release": id})
	}
	if out.RemoveErr != nil {
		diags.Append(d.Warning("Objects Left by Failed Revisions", fmt.Sprintf(
			"Release %s was upgraded, but %s, created by a revision that failed or was interrupted and no longer part of the release, "+
				"could not be deleted. Delete them by hand.\n\n%s", id, strings.Join(out.Removed, ", "), out.RemoveErr)))
	}
	return diags
}

// plannedManifests returns the known manifests of a manifests map (a plan's, or a state's) by
// key, and the keys whose manifests are unknown, sorted.
func plannedManifests(manifests types.Map) (map[string]string, []string) {
	known := make(map[string]string, len(manifests.Elements()))
	var unknown []string
	for k, v := range manifests.Elements() {
		s, ok := v.(types.String)
		switch {
		case !ok || s.IsUnknown():
			unknown = append(unknown, k)
		case !s.IsNull():
			known[k] = s.ValueString()
		}
	}
	slices.Sort(unknown)
	return known, unknown
}

// completeManifests returns the known manifests of a manifests map, and whether they are all
// of it: the map is neither null nor unknown, and no entry is unknown or null.
func completeManifests(manifests types.Map) (map[string]string, bool) {
	known, unknown := plannedManifests(manifests)
	return known, !manifests.IsNull() && !manifests.IsUnknown() && len(unknown) == 0 && len(known) == len(manifests.Elements())
}

func (r *releaseResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state releaseModel
	resp.Diagnostics.Append(readRelease(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	d := state.diagnostics()
	clients, err := r.data.connect(ctx)
	if err != nil {
		resp.Diagnostics.Append(d.Redacted(connectionDiagnostic(err, "uninstalling release "+state.releaseID())))
		return
	}
	id := state.releaseID()
	tflog.Info(ctx, "uninstalling release "+id, map[string]any{"release": id})
	client := newHelmClient(ctx, clients, &state)
	kept, err := client.Uninstall(ctx, state.Namespace.ValueString(), state.Name.ValueString(), state.timeoutDuration(), state.cascade())
	if err != nil {
		resp.Diagnostics.Append(d.Error("Unable to Uninstall Release", fmt.Sprintf(
			"Release %s could not be uninstalled, or its objects were not gone within the timeout; the message says which objects remain "+
				"and what holds them (finalizers). Remove what blocks them, or raise timeout, and destroy again.\n\n%s",
			id, err)))
		return
	}
	if len(kept) > 0 {
		resp.Diagnostics.Append(keptDiagnostic(d, id, kept))
	}
}

// keptDiagnostic names the objects the uninstall of release id left in place, as their
// resource policy asks, as Helm's CLI lists them: those of a namespace go when it is deleted,
// cluster-scoped ones stay, annotated with a release that no longer exists.
func keptDiagnostic(d releaseDiagnostics, id string, kept []helmrelease.Kept) diag.Diagnostic {
	var namespaced, cluster []string
	for _, k := range kept {
		if k.Namespace == "" {
			cluster = append(cluster, k.Kind+" "+k.Name)
		} else {
			namespaced = append(namespaced, k.Kind+" "+k.Namespace+"/"+k.Name)
		}
	}
	detail := fmt.Sprintf("Release %s is uninstalled, and Helm kept %d of its objects, as their annotation helm.sh/resource-policy: keep asks.", id, len(kept))
	if len(cluster) > 0 {
		detail += fmt.Sprintf("\n\nCluster-scoped, these stay after the environment's namespace is deleted: %s. A release that installs "+
			"them again (the next review app of the same chart) adopts them only with take_ownership = true; delete them with kubectl "+
			"when nothing needs them.", strings.Join(cluster, ", "))
	}
	if len(namespaced) > 0 {
		detail += fmt.Sprintf("\n\nIn a namespace, these go when it is deleted (the environment's destroy), and stay until then: %s.",
			strings.Join(namespaced, ", "))
	}
	return d.Warning("Objects Kept by the Uninstall", detail)
}
