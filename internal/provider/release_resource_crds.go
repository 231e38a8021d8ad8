package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// crdKeyPrefix starts the manifest key of every CustomResourceDefinition.
const crdKeyPrefix = "CustomResourceDefinition.apiextensions.k8s.io/"

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
	if slices.ContainsFunc(unknown, isCRDKey) {
		return types.ListUnknown(types.StringType)
	}
	var values []attr.Value
	for _, key := range slices.Sorted(maps.Keys(known)) {
		if isCRDKey(key) {
			values = append(values, types.StringValue(known[key]))
		}
	}
	return types.ListValueMust(types.StringType, values)
}

func isCRDKey(key string) bool { return strings.HasPrefix(key, crdKeyPrefix) }

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

// notServedYet splits objs into those the dry run can check and those of kinds the release's
// chart or crds_from defines (defined) that the cluster does not serve yet, whose keys it returns:
// the apply creates, or waits for, their definitions first, so they are checked offline only.
func notServedYet(clients *kube.Clients, objs []changedObject, defined map[k8sschema.GroupKind]bool) ([]changedObject, []string) {
	var checkable []changedObject
	var keys []string
	// Asked once per kind: discovery that does not know a kind is read again, for every object
	// of it otherwise.
	unserved := map[string]bool{}
	for _, o := range objs {
		apiVersion, _ := o.object["apiVersion"].(string)
		kind, _ := o.object["kind"].(string)
		if defined[groupKindOf(apiVersion, kind)] {
			id := apiVersion + "/" + kind
			known, asked := unserved[id]
			if !asked {
				served, err := clients.Serves(apiVersion, kind)
				known = err == nil && !served
				unserved[id] = known
			}
			if known {
				keys = append(keys, o.key)
				continue
			}
		}
		checkable = append(checkable, o)
	}
	return checkable, keys
}

// groupKindOf returns the group and kind of an apiVersion and kind.
func groupKindOf(apiVersion, kind string) k8sschema.GroupKind {
	gv, _ := k8sschema.ParseGroupVersion(apiVersion)
	return k8sschema.GroupKind{Group: gv.Group, Kind: kind}
}

// addNotServedWarning names, once per release, the objects of kinds the cluster does not serve
// yet, which were checked against their definitions instead of a dry run.
func addNotServedWarning(m *releaseModel, keys []string, diags *diag.Diagnostics) {
	if len(keys) == 0 {
		return
	}
	slices.Sort(keys)
	diags.Append(m.diagnostics().Warning("Custom Resources Checked Offline", fmt.Sprintf(
		"Release %s: the cluster does not serve the kinds of these objects yet, so they were checked against the schemas of "+
			"their CustomResourceDefinitions (the chart's own, or crds_from) instead of a dry run on the cluster: %s. The apply "+
			"creates the chart's definitions, and waits until those of crds_from are established, before it installs them.",
		m.releaseID(), strings.Join(keys, ", "))))
}

// waitForDefinitions waits, before the apply, until every CustomResourceDefinition of
// crds_from is established, within timeout. It reports false, with a diagnostic, when one is
// not; nothing has been applied then.
func (r *releaseResource) waitForDefinitions(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) bool {
	defs := m.definitions()
	if len(defs) == 0 {
		return true
	}
	d := m.diagnostics()
	clients, err := r.data.connect(ctx)
	if err != nil {
		diags.Append(d.Redacted(connectionDiagnostic(err, "waiting for the CustomResourceDefinitions of release "+m.releaseID())))
		return false
	}
	names := make([]string, 0, len(defs))
	for _, def := range defs {
		names = append(names, strings.TrimPrefix(def.Key, crdKeyPrefix))
	}
	ctx, cancel := context.WithTimeout(ctx, m.timeoutDuration())
	defer cancel()
	err = clients.WaitEstablished(ctx, names)
	if err == nil {
		return true
	}
	advice := "Apply the release that installs them first (crds_from = gitlabk8s_release.<name>.crds orders the two), or raise timeout."
	var notEstablished *kube.NotEstablishedError
	if errors.As(err, &notEstablished) && len(notEstablished.Missing) == 0 {
		advice = "The API server has not accepted them (kubectl describe crd names the condition that is not met); fix the definitions, or raise timeout."
	}
	diags.Append(d.Error("CustomResourceDefinitions Not Established", fmt.Sprintf(
		"Release %s was not applied: the CustomResourceDefinitions of crds_from were not established within the timeout, so the "+
			"cluster would not serve the kinds of its objects. %s\n\n%v", m.releaseID(), advice, err)))
	return false
}
