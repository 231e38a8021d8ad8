package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// importedPrivateKey is the private state entry an import writes: the refresh that follows
// reads the release without its configuration, which alone says which values are sensitive
// (release.Inputs.Imported).
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
