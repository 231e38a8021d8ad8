package provider

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
)

// The values of crd_policy, as Flux's helm-controller names its CRD policies.
const (
	crdPolicyCreate        = "create"
	crdPolicyCreateReplace = "create_replace"
)

var crdPolicies = []string{crdPolicyCreate, crdPolicyCreateReplace}

func crdPolicyAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		Optional: true,
		Computed: true,
		Default:  stringdefault.StaticString(crdPolicyCreate),
		MarkdownDescription: "What the apply does with the CustomResourceDefinitions in the chart's `crds/` directories, one of " +
			quoted(crdPolicies) + ". `" + crdPolicyCreate + "` (the default) is Helm's rule: they are created when the release is " +
			"installed and never changed afterwards (the plan of an upgrade that changes or adds one warns that it is left as it is). `" + crdPolicyCreateReplace + "` applies them, server-side, before every install " +
			"and upgrade, so a chart's new version of a definition reaches the cluster; the plan shows the change in `manifests`, and " +
			"refuses a definition that drops a version the cluster still records in `status.storedVersions`. Definitions in the " +
			"chart's templates are applied by Helm as any object, whatever the policy.",
		Validators: []validator.String{stringvalidator.OneOf(crdPolicies...)},
	}
}

// replacesCRDs reports whether the apply applies the chart's crds/ definitions (create_replace).
func (m *releaseModel) replacesCRDs() bool {
	return m.CRDPolicy.ValueString() == crdPolicyCreateReplace
}

// addDroppedDiagnostic refuses, under create_replace, a changed definition of the chart's
// crds/ that no longer lists a version the cluster's definition still records in
// status.storedVersions: the API server would refuse it, and objects may be stored in it.
func addDroppedDiagnostic(m *releaseModel, dropped release.DroppedVersions, diags *diag.Diagnostics) {
	name := dropped.Name
	diags.Append(m.diagnostics().AttributeError(path.Root("manifests").AtMapKey(dropped.Key), "Stored Version Dropped", fmt.Sprintf(
		"Release %s: the chart's CustomResourceDefinition %s no longer lists %s, which the cluster still records in its "+
			"status.storedVersions, so objects may still be stored in it and the API server would refuse the replacement. Migrate "+
			"the objects to a version the new definition serves and remove the old one from status.storedVersions (kubectl patch crd "+
			"%s --subresource=status), or keep the chart's previous version.", m.releaseID(), name, strings.Join(dropped.Versions, ", "), name)))
}

// definitionsReplacedWarning says, in the plan that turns create_replace on, which definitions
// of the chart's crds/ the cluster has otherwise than the state recorded under create: the
// apply replaces them, though manifests, which recorded the chart's, show no change.
func definitionsReplacedWarning(m *releaseModel, keys []string, diags *diag.Diagnostics) {
	if len(keys) == 0 {
		return
	}
	diags.Append(m.diagnostics().AttributeWarning(path.Root("crd_policy"), "CustomResourceDefinitions Replaced", fmt.Sprintf(
		"Release %s: the cluster's definitions of these CustomResourceDefinitions of the chart's crds/ are not the chart's: %s. "+
			"Under crd_policy = %q they were never changed after the install, while manifests recorded the chart's, so manifests "+
			"show no change; with crd_policy = %q this apply upgrades the release and applies the chart's before it.",
		m.releaseID(), strings.Join(keys, ", "), crdPolicyCreate, crdPolicyCreateReplace)))
}

// definitionsNotAppliedWarning says, under create, which definitions of the chart's crds/ the
// plan shows changed or added on an upgrade: Helm creates them on install alone, so the apply
// leaves the cluster's as they are, and the manifests record the chart's.
func definitionsNotAppliedWarning(m *releaseModel, keys []string, diags *diag.Diagnostics) {
	if len(keys) == 0 {
		return
	}
	diags.Append(m.diagnostics().AttributeWarning(path.Root("manifests").AtMapKey(keys[0]), "CustomResourceDefinitions Not Upgraded", fmt.Sprintf(
		"Release %s: the chart changes or adds these definitions in its crds/ directories: %s. With crd_policy = %q, Helm's rule, "+
			"they are created when the release is installed and never changed afterwards, so this upgrade leaves the cluster's as they "+
			"are, while manifests record the chart's. Set crd_policy = %q to apply them before every upgrade, or apply them yourself "+
			"(kubectl apply --server-side -f crds/).",
		m.releaseID(), strings.Join(keys, ", "), crdPolicyCreate, crdPolicyCreateReplace)))
}
