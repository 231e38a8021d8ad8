package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
)

// generatedPrivateKey names the resource's private state entry that holds, as JSON, the
// release's release.Generated record.
const generatedPrivateKey = "generated"

// privateGetter and privateSetter are the framework's private state, as plan and apply use it.
type (
	privateGetter interface {
		GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
	}
	privateSetter interface {
		SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
	}
)

// readGenerated returns the release's Generated record; an entry that cannot be read only
// costs the values it held.
func readGenerated(ctx context.Context, private privateGetter) release.Generated {
	var rec release.Generated
	if private == nil {
		return rec
	}
	data, _ := private.GetKey(ctx, generatedPrivateKey)
	if len(data) > 0 && json.Unmarshal(data, &rec) != nil {
		return release.Generated{}
	}
	return rec
}

// writeGenerated records gen in private state for the next plan.
// d builds its diagnostics.
func writeGenerated(ctx context.Context, private privateSetter, gen release.Generated, d releaseDiagnostics) diag.Diagnostics {
	data, err := json.Marshal(gen)
	if err != nil {
		var diags diag.Diagnostics
		diags.Append(d.Error("Unable to Record Generated Values", fmt.Sprintf("The generated values of the release could not be encoded.\n\n%v", err)))
		return diags
	}
	return private.SetKey(ctx, generatedPrivateKey, data)
}

// plannedElements are the manifests of a plan: known for what the plan can show, unknown
// for what holds values generated afresh, or unknown altogether when generated values name
// objects.
func plannedElements(r *release.Rendering) (types.Map, diag.Diagnostics) {
	if r.Rendered.NamesGenerated {
		return types.MapUnknown(types.StringType), nil
	}
	elems := make(map[string]attr.Value, len(r.Manifests))
	for k, v := range r.Manifests {
		elems[k] = types.StringValue(v)
	}
	for _, k := range r.Generated {
		if _, ok := elems[k]; ok {
			elems[k] = types.StringUnknown()
		}
	}
	return types.MapValue(types.StringType, elems)
}

// generatedValuesWarning says which objects a plan cannot show because the chart generates
// their values afresh, and that later plans keep them.
func generatedValuesWarning(m *releaseModel, r *release.Rendering, diags *diag.Diagnostics) {
	d := m.diagnostics()
	switch {
	case r.Rendered.NamesGenerated:
		diags.Append(d.AttributeWarning(path.Root("manifests"), "Object Names Known After Apply", fmt.Sprintf(
			"Release %s: the chart generates the name of an object it applies (randAlphaNum, uuidv4, now or similar in metadata.name), "+
				"so this plan cannot list the objects; manifests are known after apply. Later plans take the name from what the apply "+
				"applied, so they list the objects and show only what changes.", m.releaseID())))
	case len(r.Generated) > 0:
		diags.Append(d.AttributeWarning(path.Root("manifests"), "Generated Values Known After Apply", fmt.Sprintf(
			"Release %s: the chart draws values in %s that this plan cannot show: the release's first values, or a key, certificate, "+
				"bcrypt hash or time drawn anew because what it is drawn from changed (the apply cannot draw those alike). They are "+
				"known after apply. Later plans keep the values the apply draws as long as what they are drawn from stays the same, "+
				"and show only what changes. To choose a value yourself, pass it in through values or set_sensitive.",
			m.releaseID(), strings.Join(r.Generated, ", "))))
	}
}
