package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
)

// Read refreshes the release from the cluster (release.Request.Read): its revision and status
// from Helm's history, and manifests from the live objects, projected onto the fields the
// chart sets.
func (r *releaseResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state releaseModel
	resp.Diagnostics.Append(readRelease(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id, d := state.releaseID(), state.diagnostics()
	recorded := recordedOf(&state)
	env := r.renderEnvironment(ctx, &state, recorded, opRefresh, req.Private, &resp.Diagnostics)
	if env == nil {
		return
	}
	refreshed, err := env.request.Read(ctx, recorded)
	if err != nil {
		resp.Diagnostics.Append(readDiagnostic(&state, err))
		return
	}
	if refreshed.Gone {
		tflog.Info(ctx, "release "+id+" no longer exists; removing it from the state", map[string]any{"release": id})
		resp.State.RemoveResource(ctx)
		return
	}
	rel := refreshed.Last
	state.ID = types.StringValue(id)
	state.Revision = types.Int64Value(int64(rel.Version))
	state.Status = types.StringValue(string(rel.Info.Status))
	if rel.Chart != nil && rel.Chart.Metadata != nil {
		state.ChartVersion = types.StringValue(rel.Chart.Metadata.Version)
		state.AppVersion = types.StringValue(rel.Chart.Metadata.AppVersion)
	}
	if rel.Info.Status.IsPending() {
		resp.Diagnostics.Append(pendingWarning(d, id, rel, state.RecoverPending.ValueBool()))
	}
	if hidden := refreshed.EveryStringHidden; hidden != nil {
		if hidden.Err != "" {
			tflog.Debug(ctx, "the recorded chart of an imported release could not be redacted", map[string]any{"release": id, "error": hidden.Err})
		}
		resp.Diagnostics.Append(everyStringHiddenWarning(d, id, hidden.Reason))
	}
	if refreshed.RecordChanged {
		resp.Diagnostics.Append(writeRedactionRecord(ctx, resp.Private, refreshed.RedactionRecord, d)...)
		resp.Diagnostics.Append(clearImported(ctx, resp.Private)...)
	}
	resp.Diagnostics.Append(recordTexts(ctx, resp.Private, refreshed.Manifests)...)
	manifests, converted := types.MapValueFrom(ctx, types.StringType, refreshed.Manifests)
	resp.Diagnostics.Append(converted...)
	tflog.Debug(ctx, "refreshed release objects", map[string]any{"release": id, "manifests": len(refreshed.Manifests)})
	state.Manifests = manifests
	state.setFromManifests()
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// readDiagnostic says why a refresh of the release of m failed (release.ReadError).
func readDiagnostic(m *releaseModel, err error) diag.Diagnostic {
	id, d := m.releaseID(), m.diagnostics()
	var failed *release.ReadError
	if !errors.As(err, &failed) {
		return d.Error("Unable to Read Release", fmt.Sprintf("Release %s could not be read.\n\n%s", id, err))
	}
	redacted := failed.Err
	switch failed.Step {
	case release.ReadHistory:
		return d.Error("Unable to Read Release", fmt.Sprintf("The history of release %s could not be read.\n\n%s", id, redacted))
	case release.ReadKey:
		return d.Error("Unable to Record Release", fmt.Sprintf("No key for the markers of release %s could be drawn.\n\n%s", id, redacted))
	case release.ReadRecorded:
		return d.Error("Unable to Read Release", fmt.Sprintf("The manifest Helm recorded for release %s revision %d cannot be read.\n\n%s", id, failed.Revision, redacted))
	case release.ReadLive:
		return d.Error("Unable to Read Release Objects", fmt.Sprintf("The live objects of release %s could not be read.\n\n%s", id, redacted))
	default:
		return d.Error("Unable to Read Release Objects", fmt.Sprintf("The live objects of release %s could not be turned into manifests.\n\n%s", id, redacted))
	}
}

// everyStringHiddenWarning says that the manifests of imported release id hide every string
// value, and why. d builds it.
func everyStringHiddenWarning(d releaseDiagnostics, id, reason string) diag.Diagnostic {
	return d.Warning("Imported Manifests Hide Every Value", fmt.Sprintf(
		"The manifests of imported release %s hide every string value of its objects but their names, since which of them its "+
			"chart derives from sensitive values (a password URL-escaped in a connection string, hashed into an annotation) cannot "+
			"be told: %s. The next change applied with the configuration shows the manifests as set_sensitive and values_sensitive "+
			"redact them.",
		id, reason))
}
