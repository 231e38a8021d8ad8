package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/drift"
)

// ignoreModel is one element of ignore_differences.
type ignoreModel struct {
	Kind         types.String `tfsdk:"kind"`
	Name         types.String `tfsdk:"name"`
	JSONPointers types.List   `tfsdk:"json_pointers"`
	Managers     types.List   `tfsdk:"managers"`
}

func ignoreDifferencesAttribute() schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		Optional: true,
		MarkdownDescription: "Fields of the release's objects whose live value is not drift, as Argo CD's `ignoreDifferences`: a refresh " +
			"records the chart's value for them, so a change made there by someone else never shows in a plan. Without it, any change " +
			"to a field the chart sets shows, whoever made it, with four exceptions: maps the chart leaves empty (`annotations: {}`), " +
			"fields whose manager is one of the built-in controllers (`" + strings.Join(drift.BuiltinManagers, "`, `") + "`), " +
			"`spec.replicas` of an object that a HorizontalPodAutoscaler of the release scales, and a `caBundle` the chart leaves " +
			"empty (`\"\"` or null) in a webhook configuration, a CustomResourceDefinition's conversion webhook or an APIService, " +
			"which a controller writes at run time (Vault's agent injector, cert-manager's CA injector). A change of this setting takes effect " +
			"in the plan it appears in: a difference it ignores does not make that plan upgrade the release. An upgrade leaves these fields, " +
			"and the four exceptions, as they are live where they differ from the chart's value, unless the configuration changes the " +
			"chart's value there since the previous revision: the plan shows that change, and the apply sets it.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"kind": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "The kind of the objects the rule applies to (`Deployment`); every kind when not set.",
			},
			"name": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "The name of the object the rule applies to; every object of `kind` when not set.",
			},
			"json_pointers": schema.ListAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Fields to ignore, as JSON pointers (RFC 6901) into the object: `/spec/replicas`, " +
					"`/spec/template/spec/containers/0/image`, `/metadata/annotations/example.com~1owner` (`/` in a key is written `~1`, `~` is " +
					"written `~0`). A pointer ignores everything under it.",
			},
			"managers": schema.ListAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Field managers whose fields are ignored, by their exact names in `metadata.managedFields` (see them with " +
					"`kubectl get <kind> <name> -o yaml --show-managed-fields`): a field one of them wrote last keeps the chart's value.",
			},
		}},
		Validators: []validator.List{ignoreDifferencesValidator{}},
	}
}

// ignoreRules returns the ignore_differences of m; unknown or null values count as not set.
func (m *releaseModel) ignoreRules(ctx context.Context) []drift.Ignore {
	var models []ignoreModel
	if m.IgnoreDifferences.IsNull() || m.IgnoreDifferences.IsUnknown() || m.IgnoreDifferences.ElementsAs(ctx, &models, false).HasError() {
		return nil
	}
	out := make([]drift.Ignore, 0, len(models))
	for _, im := range models {
		out = append(out, im.rule())
	}
	return out
}

func (im ignoreModel) rule() drift.Ignore {
	return drift.Ignore{Kind: im.Kind.ValueString(), Name: im.Name.ValueString(), JSONPointers: knownStrings(im.JSONPointers), Managers: knownStrings(im.Managers)}
}

func knownStrings(list types.List) []string {
	var out []string
	for _, v := range list.Elements() {
		if s, ok := v.(types.String); ok && !s.IsNull() && !s.IsUnknown() {
			out = append(out, s.ValueString())
		}
	}
	return out
}

// ignoreDifferencesValidator checks each rule of ignore_differences at validate time.
type ignoreDifferencesValidator struct{}

var _ validator.List = ignoreDifferencesValidator{}

func (ignoreDifferencesValidator) Description(context.Context) string {
	return "rules that each name json_pointers or managers; pointers are RFC 6901 JSON pointers"
}

func (v ignoreDifferencesValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (ignoreDifferencesValidator) ValidateList(ctx context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for i, elem := range req.ConfigValue.Elements() {
		obj, ok := elem.(types.Object)
		if !ok || obj.IsUnknown() {
			continue
		}
		var im ignoreModel
		if obj.As(ctx, &im, basetypes.ObjectAsOptions{}).HasError() || hasUnknownValue(im.JSONPointers) || hasUnknownValue(im.Managers) {
			continue
		}
		for _, err := range im.rule().Validate() {
			resp.Diagnostics.Append(ignoreRuleDiagnostic(req.Path.AtListIndex(i), err))
		}
	}
}
