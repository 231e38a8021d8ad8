package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

func crdsAttribute() schema.ListAttribute {
	return schema.ListAttribute{
		Computed:    true,
		ElementType: types.StringType,
		MarkdownDescription: "The CustomResourceDefinitions the release installs, from the chart's `crds/` directories and its " +
			"templates: their manifests as `manifests` shows them (values hidden there are hidden here), in the order of their keys, " +
			"known at plan time with `manifests`. Empty when the chart has none. Pass them to the releases that create objects of " +
			"their kinds as `crds_from`.",
	}
}

func crdsFromAttribute() schema.ListAttribute {
	return schema.ListAttribute{
		Optional:    true,
		ElementType: types.StringType,
		MarkdownDescription: "CustomResourceDefinitions (YAML, one per element) that other releases install and this release's " +
			"objects rely on, usually `gitlabk8s_release.<operator>.crds`, which also orders the two releases. The plan checks " +
			"custom resources of their kinds against their schemas, also where the cluster does not serve the kinds yet (named " +
			"in one warning) or the namespace does not exist yet, and `.Capabilities.APIVersions` lists the versions they serve. " +
			"The apply waits until each is established before it installs or upgrades the release. While it is unknown, so are " +
			"`manifests`.",
		Validators: []validator.List{crdsFromValidator{}},
	}
}

// crdsOf is the crds attribute of a release with these manifests: unknown while a
// CustomResourceDefinition among them is.
func crdsOf(manifests types.Map) types.List {
	if manifests.IsUnknown() {
		return types.ListUnknown(types.StringType)
	}
	known, unknown := plannedManifests(manifests)
	if slices.ContainsFunc(unknown, release.IsDefinitionKey) {
		return types.ListUnknown(types.StringType)
	}
	var values []attr.Value
	for _, key := range slices.Sorted(maps.Keys(known)) {
		if release.IsDefinitionKey(key) {
			values = append(values, types.StringValue(known[key]))
		}
	}
	return types.ListValueMust(types.StringType, values)
}

// setFromManifests sets what a release derives from its manifests: urls and crds.
func (m *releaseModel) setFromManifests() {
	m.URLs = urlsOf(m.Manifests)
	m.CRDs = crdsOf(m.Manifests)
}

// definitions returns the CustomResourceDefinitions of crds_from that parse (the validator
// refuses the others), none while it is unknown.
func (m *releaseModel) definitions() []validate.Object {
	var out []validate.Object
	for _, v := range m.CRDsFrom.Elements() {
		s, ok := v.(types.String)
		if !ok || s.IsNull() || s.IsUnknown() {
			continue
		}
		if def, err := validate.ParseDefinition(s.ValueString()); err == nil {
			out = append(out, def)
		}
	}
	return out
}

// withDefinedAPIVersions adds to apiVersions (nil: Helm's defaults) the versions defs serve,
// so a chart that tests .Capabilities.APIVersions renders alike whether or not the cluster
// serves them yet.
func withDefinedAPIVersions(apiVersions []string, defaults func() []string, defs []validate.Object) []string {
	served := validate.ServedAPIVersions(defs)
	if len(served) == 0 {
		return apiVersions
	}
	if apiVersions == nil {
		apiVersions = defaults()
	}
	for _, v := range served {
		if !slices.Contains(apiVersions, v) {
			apiVersions = append(apiVersions, v)
		}
	}
	return apiVersions
}

// crdsFromValidator refuses an element of crds_from that is not one CustomResourceDefinition.
type crdsFromValidator struct{}

var _ validator.List = crdsFromValidator{}

func (crdsFromValidator) Description(context.Context) string {
	return "each element one apiextensions.k8s.io/v1 CustomResourceDefinition in YAML"
}

func (v crdsFromValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (crdsFromValidator) ValidateList(_ context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	for i, elem := range req.ConfigValue.Elements() {
		s, ok := elem.(types.String)
		if !ok || s.IsNull() || s.IsUnknown() {
			continue
		}
		if _, err := validate.ParseDefinition(s.ValueString()); err != nil {
			resp.Diagnostics.Append(releaseDiagnostics{}.AttributeError(req.Path.AtListIndex(i), "Invalid CustomResourceDefinition", fmt.Sprintf(
				"Element %d of crds_from is not one CustomResourceDefinition. Pass another release's crds "+
					"(crds_from = gitlabk8s_release.<name>.crds), or the YAML of apiextensions.k8s.io/v1 CustomResourceDefinitions, one "+
					"per element.\n\n%v", i, err)))
		}
	}
}

// addNotServedWarning names, once per release, the objects of kinds the cluster does not serve
// yet, which were checked against their definitions instead of a dry run.
func addNotServedWarning(m *releaseModel, keys []string, diags *diag.Diagnostics) {
	if len(keys) == 0 {
		return
	}
	keys = slices.Sorted(slices.Values(keys))
	diags.Append(m.diagnostics().Warning("Custom Resources Checked Offline", fmt.Sprintf(
		"Release %s: the cluster does not serve the kinds of these objects yet, so they were checked against the schemas of "+
			"their CustomResourceDefinitions (the chart's own, or crds_from) instead of a dry run on the cluster: %s. The apply "+
			"creates the chart's definitions, and waits until those of crds_from are established, before it installs them.",
		m.releaseID(), strings.Join(keys, ", "))))
}
