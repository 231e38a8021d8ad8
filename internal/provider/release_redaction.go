package provider

import (
	"context"
	"fmt"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// redactionPrivateKey names the resource's private state entry that holds the release's
// manifest.Redaction: the key of its markers and the digests of the objects last applied.
//
// The key is drawn by the first apply, or by the first refresh of a release that has none
// (imported, or written before keys existed), and kept from then on. A plan made before it
// exists shows "(sensitive value)" alone: a key drawn at plan time would be drawn again,
// differently, when Terraform plans once more during the apply.
const redactionPrivateKey = "redaction"

// readRedaction returns what the release keeps for its redaction; a release without one, or
// with an entry that cannot be read, has no key yet.
func readRedaction(ctx context.Context, private privateGetter) manifest.Redaction {
	if private == nil {
		return manifest.Redaction{}
	}
	data, diags := private.GetKey(ctx, redactionPrivateKey)
	if diags.HasError() {
		return manifest.Redaction{}
	}
	rec, err := manifest.ParseRedaction(data)
	if err != nil {
		tflog.Warn(ctx, "the release's redaction record is unreadable; a new key is drawn", map[string]any{"error": err.Error()})
	}
	return rec
}

// writeRedaction records rec in private.
func writeRedaction(ctx context.Context, private privateSetter, rec manifest.Redaction) diag.Diagnostics {
	data, err := rec.Encode()
	if err != nil {
		var diags diag.Diagnostics
		diags.AddError("Unable to Record Release", fmt.Sprintf("The redaction record of the release could not be encoded.\n\n%v", err))
		return diags
	}
	return private.SetKey(ctx, redactionPrivateKey, data)
}

// withKey returns rec with a key, drawing one when it has none.
func withKey(rec manifest.Redaction, diags *diag.Diagnostics) (manifest.Redaction, bool) {
	if rec.Key != nil {
		return rec, true
	}
	key, err := manifest.NewRedactionKey()
	if err != nil {
		diags.AddError("Unable to Record Release", fmt.Sprintf("No key for the release's markers could be drawn.\n\n%v", err))
		return rec, false
	}
	rec.Key = key
	return rec, true
}

// keepUnchanged makes the manifests of rendered what a plan over state shows: an object that
// did not change since state was written keeps the state's manifest, whose markers may have
// been written before the release had its key (see manifest.KeepUnchanged).
func (rendered *rendering) keepUnchanged(state *releaseModel, rec manifest.Redaction) {
	if state == nil || rendered.redacted == nil {
		return
	}
	old, _ := plannedManifests(state.Manifests)
	if len(old) == 0 {
		return
	}
	var digests map[string]string
	if rec.Key != nil && len(rec.Digests) > 0 {
		digests, _ = rendered.redacted.ObjectDigests(rec.Key, rendered.redaction)
	}
	if rec.Conservative {
		// An imported release keeps its conservative manifests while nothing changes; the first
		// change shows every object as this rendering redacts it.
		kept := manifest.KeepConservative(rendered.manifests, old, digests, rec.Digests)
		rendered.conservative = !maps.Equal(kept, rendered.manifests)
		rendered.manifests = kept
		return
	}
	rendered.manifests = manifest.KeepUnchanged(rendered.manifests, old, digests, rec.Digests)
}

// recordApplied records in private the key of rec, drawn if needed, and the digests of the
// objects of rendered, which was applied.
func recordApplied(ctx context.Context, private privateSetter, rec manifest.Redaction, rendered *rendering) diag.Diagnostics {
	var diags diag.Diagnostics
	if private == nil {
		return diags
	}
	rec, ok := withKey(rec, &diags)
	if !ok {
		return diags
	}
	digests, err := rendered.redacted.ObjectDigests(rec.Key, rendered.redaction)
	if err != nil {
		diags.AddError("Unable to Record Release", fmt.Sprintf("The applied objects could not be digested.\n\n%s", rendered.redacted.Redactor.String(err.Error())))
		return diags
	}
	// Manifests kept conservative stay so until a change writes them as rendered.
	rec.Digests, rec.Conservative = digests, rendered.conservative
	diags.Append(writeRedaction(ctx, private, rec)...)
	return diags
}
