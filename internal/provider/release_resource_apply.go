package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
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
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
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
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !needsUpgrade(&plan, &state) {
		// Only settings changed; what runs in the cluster stays as it is.
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

// apply installs or upgrades the release to what plan shows, and records the revision,
// status and the manifests the plan left unknown in plan, and in private what the next plan
// takes generated values from and redacts with. state is nil when creating, and so is
// stored, the private state the release kept (its markers' key, its seed). Helm is handed the
// chart frozen to the rendering checked against the plan (chart.Freeze), so what it applies is
// that rendering, whatever the templates draw at random or look up.
func (r *releaseResource) apply(ctx context.Context, plan, state *releaseModel, stored privateGetter, private privateSetter, diags *diag.Diagnostics) {
	id, d := plan.releaseID(), plan.diagnostics()
	creating := state == nil
	env := r.renderEnvironment(ctx, plan, true, stored, diags)
	if env == nil {
		return
	}
	applying, err := env.request.Apply(ctx, recordedOf(state))
	plan.redactorCell().Store(env.request.Redactor)
	if err != nil {
		diags.Append(applyRefusedDiagnostic(plan, err))
		return
	}
	next, rendered := applying.Next, applying.Rendering
	target := next.Target
	if err := checkPlanned(plan.Manifests, rendered.Manifests); err != nil {
		diags.Append(planMismatchDiagnostic(d, id, err))
		return
	}
	planned := rendered.Manifests
	frozen, err := chart.Freeze(rendered.Loaded, rendered.Rendered.Files, env.request.Patches)
	if err != nil {
		diags.Append(d.Error("Unable to Apply Release", fmt.Sprintf("The chart of release %s could not be prepared for Helm.\n\n%v", id, err)))
		return
	}
	caps, err := chart.Capabilities(rendered.Options)
	if err != nil {
		diags.Append(d.Error("Unable to Apply Release", fmt.Sprintf("The capabilities of release %s could not be built.\n\n%v", id, err)))
		return
	}
	namespace := plan.Namespace.ValueString()
	spec := helmrelease.Spec{
		Name:           plan.Name.ValueString(),
		Namespace:      namespace,
		Chart:          frozen.Chart,
		Values:         rendered.Values,
		Capabilities:   caps,
		Atomic:         plan.Atomic.ValueBool(),
		Wait:           plan.Wait.ValueBool(),
		Timeout:        plan.timeoutDuration(),
		MaxHistory:     int(plan.MaxHistory.ValueInt64()),
		Description:    revisionDescription(plan.Description, r.ci()),
		Labels:         gitlab.LedgerLabels(r.ci()),
		RecoverPending: plan.RecoverPending.ValueBool(),
		RunTests:       plan.RunTests.ValueBool(),
		TakeOwnership:  plan.TakeOwnership.ValueBool(),
		LeaveToOthers:  leaveToOthers(plan.ignoreRules(ctx)),
		PostRenderer: &helmrelease.PlanCheck{
			Planned: applying.Stream,
			// Helm streams the hooks and the other objects apart; what a stream does not
			// hold, and the CRDs, come from the same rendering as the check above.
			Manifests: func(objs []manifest.Object) (map[string]string, error) {
				return rendered.Redacted.PostRenderedManifests(objs, rendered.RedactionOptions)
			},
		},
	}
	if !r.waitForDefinitions(ctx, plan, diags) || !r.replaceDefinitions(ctx, plan, rendered, diags) {
		return
	}
	if !creating && plan.ForceReplace.ValueBool() && !r.replaceImmutable(ctx, plan, env, rendered, diags) {
		return
	}
	tflog.Info(ctx, "applying release "+id, map[string]any{"release": id, "revision": target.Revision, "objects": len(planned)})
	out, err := env.client.Apply(ctx, spec, next)
	if out != nil && out.Recovered.Action != helmrelease.RecoveryNone {
		diags.Append(recoveredWarning(d, id, out.Recovered))
	}
	if out != nil && len(out.Removed) > 0 {
		tflog.Info(ctx, "release "+id+": deleted objects left by failed revisions: "+strings.Join(out.Removed, ", "), map[string]any{"release": id})
	}
	if out != nil && out.RemoveErr != nil {
		diags.Append(d.Warning("Objects Left by Failed Revisions", fmt.Sprintf(
			"Release %s was upgraded, but %s, created by a revision that failed or was interrupted and no longer part of the release, "+
				"could not be deleted. Delete them by hand.\n\n%s", id, strings.Join(out.Removed, ", "), out.RemoveErr)))
	}
	if err != nil {
		diags.Append(applyDiagnostic(d, id, creating, err))
		return
	}
	plan.Revision = types.Int64Value(int64(out.Release.Version))
	plan.Status = types.StringValue(string(out.Release.Info.Status))
	if _, unknown := plannedManifests(plan.Manifests); plan.Manifests.IsUnknown() || len(unknown) > 0 {
		// What the plan could not show is now known: what was applied.
		manifests, d := types.MapValueFrom(ctx, types.StringType, planned)
		diags.Append(d...)
		plan.Manifests = manifests
	}
	gen, rec, err := env.request.Applied(applying)
	diags.Append(writeGenerated(ctx, private, gen, d)...)
	if err != nil {
		diags.Append(d.Error("Unable to Record Release", fmt.Sprintf(
			"Release %s was applied, but what the next plan compares it with could not be recorded.\n\n%v", id, err)))
		return
	}
	diags.Append(writeRedactionRecord(ctx, private, rec, d)...)
	tflog.Info(ctx, "applied release "+id, map[string]any{"release": id, "revision": out.Release.Version})
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
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
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
	if err := client.Uninstall(ctx, state.Namespace.ValueString(), state.Name.ValueString(), state.timeoutDuration(), state.cascade()); err != nil {
		resp.Diagnostics.Append(d.Error("Unable to Uninstall Release", fmt.Sprintf(
			"Release %s could not be uninstalled, or its objects were not gone within the timeout; the message says which objects remain "+
				"and what holds them (finalizers). Remove what blocks them, or raise timeout, and destroy again.\n\n%s",
			id, err)))
	}
}
