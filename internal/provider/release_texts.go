package provider

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// textsPrivateKey names the resource's private state entry that holds, as JSON, the
// manifest.TextRecord of the release's manifests in the state: a later process gives an
// object whose content is unchanged the state's text for it instead of writing it again.
const textsPrivateKey = "texts"

// rememberTexts takes the texts of manifests, the state's, as this process's, by the record
// private holds of them (rememberTexts does nothing when it holds none, or one of another
// build or of other texts).
func rememberTexts(ctx context.Context, private privateGetter, manifests map[string]string) {
	if private == nil || len(manifests) == 0 {
		return
	}
	data, _ := private.GetKey(ctx, textsPrivateKey)
	if len(data) == 0 {
		return
	}
	var rec manifest.TextRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		tflog.Debug(ctx, "the record of the manifests' texts cannot be read; they are written anew", map[string]any{"error": err.Error()})
		return
	}
	taken := manifest.RememberWritten(manifests, rec, buildIdentity())
	tflog.Trace(ctx, "texts of the state's manifests taken", map[string]any{"taken": taken, "manifests": len(manifests)})
}

// recordTexts records in private the texts of manifests, what the state will hold, that this
// process wrote, for the next process to take; with none, it clears the record.
func recordTexts(ctx context.Context, private privateSetter, manifests map[string]string) diag.Diagnostics {
	rec, ok := manifest.RecordWritten(manifests, buildIdentity())
	if !ok {
		return private.SetKey(ctx, textsPrivateKey, nil)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return private.SetKey(ctx, textsPrivateKey, nil)
	}
	return private.SetKey(ctx, textsPrivateKey, data)
}
