package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/patch"
)

// patchModel is one element of patches.
type patchModel struct {
	Target *patchTargetModel `tfsdk:"target"`
	Patch  types.String      `tfsdk:"patch"`
}

// patchTargetModel is a patch's target.
type patchTargetModel struct {
	Group         types.String `tfsdk:"group"`
	Version       types.String `tfsdk:"version"`
	Kind          types.String `tfsdk:"kind"`
	Name          types.String `tfsdk:"name"`
	Namespace     types.String `tfsdk:"namespace"`
	LabelSelector types.String `tfsdk:"label_selector"`
}

func patchesAttribute() schema.ListNestedAttribute {
	regexp := " A regular expression matched against the whole field, as kustomize matches it; any when not set."
	return schema.ListNestedAttribute{
		Optional: true,
		MarkdownDescription: "Patches to the objects the chart renders, hooks and test hooks included, for what the chart has no value " +
			"for (a node selector, an annotation, a resource limit), as Flux's `postRenderers` with kustomize patches. Each patch " +
			"applies, in order, to every object its `target` selects. The plan's `manifests` show the patched objects and the apply " +
			"applies exactly them. A patch whose target selects no object fails the plan.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"target": schema.SingleNestedAttribute{
				Required: true,
				MarkdownDescription: "The objects the patch applies to: those that match every field set. At least one of `kind`, `name` " +
					"and `label_selector` must be set.",
				Attributes: map[string]schema.Attribute{
					"group":     schema.StringAttribute{Optional: true, MarkdownDescription: "The API group (`apps`; empty for the core group)." + regexp},
					"version":   schema.StringAttribute{Optional: true, MarkdownDescription: "The API version (`v1`)." + regexp},
					"kind":      schema.StringAttribute{Optional: true, MarkdownDescription: "The kind (`Deployment`)." + regexp},
					"name":      schema.StringAttribute{Optional: true, MarkdownDescription: "The object's name." + regexp},
					"namespace": schema.StringAttribute{Optional: true, MarkdownDescription: "The object's namespace; an object the chart renders without one is in the release's." + regexp},
					"label_selector": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "A Kubernetes label selector the object's labels must match (`app.kubernetes.io/name=web,tier!=cache`).",
					},
				},
			},
			"patch": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The patch, YAML or JSON: a strategic-merge patch (a partial object; lists of containers and the " +
					"like are merged by their keys, and `apiVersion`, `kind` and `metadata.name` may be left out), or a JSON 6902 patch " +
					"when it is a list of operations (`[{op: replace, path: /spec/replicas, value: 2}]`). A value a patch puts into a " +
					"Secret is hidden in the plan like every Secret value.",
			},
		}},
		Validators: []validator.List{patchesValidator{}},
	}
}

// patches returns the patches of m, or nil when it has none or some are unknown.
func (m *releaseModel) patches(ctx context.Context) []patch.Patch {
	var models []patchModel
	if m.Patches.IsNull() || m.Patches.IsUnknown() || m.Patches.ElementsAs(ctx, &models, false).HasError() {
		return nil
	}
	out := make([]patch.Patch, 0, len(models))
	for _, pm := range models {
		out = append(out, pm.patch())
	}
	return out
}

func (pm patchModel) patch() patch.Patch {
	p := patch.Patch{Patch: pm.Patch.ValueString()}
	if t := pm.Target; t != nil {
		p.Target = patch.Target{
			Group: t.Group.ValueString(), Version: t.Version.ValueString(), Kind: t.Kind.ValueString(),
			Name: t.Name.ValueString(), Namespace: t.Namespace.ValueString(), LabelSelector: t.LabelSelector.ValueString(),
		}
	}
	return p
}

// patchesValidator checks each patch at validate time: its target selects by something, its
// selector and regular expressions parse, and its patch is one of the two forms.
type patchesValidator struct{}

var _ validator.List = patchesValidator{}

func (patchesValidator) Description(context.Context) string {
	return "patches whose target sets kind, name or label_selector and whose patch is a mapping or a list of JSON 6902 operations"
}

func (v patchesValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (patchesValidator) ValidateList(ctx context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for i, elem := range req.ConfigValue.Elements() {
		if hasUnknownValue(elem) {
			continue
		}
		obj, ok := elem.(types.Object)
		var pm patchModel
		if !ok || obj.As(ctx, &pm, basetypes.ObjectAsOptions{}).HasError() {
			continue
		}
		if err := pm.patch().Validate(); err != nil {
			resp.Diagnostics.Append(patchDiagnostic(releaseDiagnostics{}, req.Path.AtListIndex(i), "Invalid Patch", err))
		}
	}
}

// hasUnknownValue reports whether v, or anything in it, is unknown.
func hasUnknownValue(v attr.Value) bool {
	if v.IsUnknown() {
		return true
	}
	switch c := v.(type) {
	case types.Object:
		for _, a := range c.Attributes() {
			if hasUnknownValue(a) {
				return true
			}
		}
	case types.List:
		for _, e := range c.Elements() {
			if hasUnknownValue(e) {
				return true
			}
		}
	}
	return false
}

// patchDiagnostic explains err, a patch that is invalid, fails or selects nothing, on the
// patch, through d, which redacts it.
func patchDiagnostic(d releaseDiagnostics, at path.Path, summary string, err error) diag.Diagnostic {
	var what string
	switch {
	case errors.Is(err, patch.ErrNoMatch):
		what = "Its target selects no object the chart renders. Check the target's kind, name, namespace and label_selector " +
			"against the plan's manifests (the keys are `<Kind>[.<group>]/<name>`), or remove the patch."
	case errors.Is(err, patch.ErrNoTarget):
		what = "Set target's kind, name or label_selector, so the patch applies to the objects meant."
	default:
		what = "Fix the patch: a strategic-merge patch is a mapping (a partial object), a JSON 6902 patch a list of operations " +
			"with op and path, each applying to every object the target selects."
	}
	return d.AttributeError(at, summary, fmt.Sprintf("The patch at %s cannot be applied. %s\n\n%s", at, what, err))
}
