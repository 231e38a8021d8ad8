package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// redactionPrivateKey names the resource's private state entry that holds the release's
// manifest.RedactionRecord: the key of its markers and the digests of the objects last applied.
//
// The key is drawn by the first apply, or by the first refresh of a release that has none
// (imported, or written before keys existed), and kept from then on. A plan made before it
// exists shows "(sensitive value)" alone: a key drawn at plan time would be drawn again,
// differently, when Terraform plans once more during the apply.
const redactionPrivateKey = "redaction"

// readRedactionRecord returns what the release keeps for its redaction; a release without one, or
// with an entry that cannot be read, has no key yet.
func readRedactionRecord(ctx context.Context, private privateGetter) manifest.RedactionRecord {
	if private == nil {
		return manifest.RedactionRecord{}
	}
	data, diags := private.GetKey(ctx, redactionPrivateKey)
	if diags.HasError() {
		return manifest.RedactionRecord{}
	}
	rec, err := manifest.ParseRedactionRecord(data)
	if err != nil {
		tflog.Warn(ctx, "the release's redaction record is unreadable; a new key is drawn", map[string]any{"error": err.Error()})
	}
	return rec
}

// writeRedactionRecord records rec in private.
// d builds its diagnostics.
func writeRedactionRecord(ctx context.Context, private privateSetter, rec manifest.RedactionRecord, d releaseDiagnostics) diag.Diagnostics {
	data, err := rec.Encode()
	if err != nil {
		var diags diag.Diagnostics
		diags.Append(d.Error("Unable to Record Release", fmt.Sprintf("The redaction record of the release could not be encoded.\n\n%v", err)))
		return diags
	}
	return private.SetKey(ctx, redactionPrivateKey, data)
}
