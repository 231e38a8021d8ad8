package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
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
			"installed and never changed afterwards. `" + crdPolicyCreateReplace + "` applies them, server-side, before every install " +
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

// checkStoredVersions refuses, under create_replace, a changed definition of the chart's crds/
// that no longer lists a version the cluster's definition still records in
// status.storedVersions: the API server would refuse it, and objects may be stored in it.
func checkStoredVersions(ctx context.Context, m, state *releaseModel, rendered *release.Rendering, clients *kube.Clients, diags *diag.Diagnostics) {
	if !m.replacesCRDs() || clients == nil {
		return
	}
	d, redactor, namespace := m.diagnostics(), redactorFor(m), m.Namespace.ValueString()
	previous := previousManifests(state)
	for _, crd := range rendered.Rendered.CRDs {
		key := redactor.Key(crd, namespace)
		if text, ok := previous[key]; ok && text == rendered.Manifests[key] {
			continue
		}
		name := strings.TrimPrefix(key, crdKeyPrefix)
		live, err := clients.GetDefinition(ctx, name)
		if err != nil {
			if !kube.IsNotFound(err) {
				tflog.Warn(ctx, "stored versions not checked", map[string]any{"release": m.releaseID(), "definition": name, "error": redactor.String(err.Error())})
			}
			continue
		}
		dropped, err := validate.DroppedStoredVersions(crd, kube.StoredVersions(live))
		if err != nil || len(dropped) == 0 {
			continue
		}
		diags.Append(d.AttributeError(path.Root("manifests").AtMapKey(key), "Stored Version Dropped", fmt.Sprintf(
			"Release %s: the chart's CustomResourceDefinition %s no longer lists %s, which the cluster still records in its "+
				"status.storedVersions, so objects may still be stored in it and the API server would refuse the replacement. Migrate "+
				"the objects to a version the new definition serves and remove the old one from status.storedVersions (kubectl patch crd "+
				"%s --subresource=status), or keep the chart's previous version.", m.releaseID(), name, strings.Join(dropped, ", "), name)))
	}
}

// replaceDefinitions applies, under create_replace, the chart's crds/ definitions server-side
// before the install or upgrade, and waits until they are established. It reports false, with a
// diagnostic, when one could not be applied or did not become established.
func (r *releaseResource) replaceDefinitions(ctx context.Context, m *releaseModel, rendered *release.Rendering, diags *diag.Diagnostics) bool {
	crds := rendered.Rendered.CRDs
	if !m.replacesCRDs() || len(crds) == 0 {
		return true
	}
	d := m.diagnostics()
	clients, err := r.data.connect(ctx)
	if err != nil {
		diags.Append(d.Redacted(connectionDiagnostic(err, "applying the CustomResourceDefinitions of release "+m.releaseID())))
		return false
	}
	names := make([]string, 0, len(crds))
	for _, crd := range crds {
		obj, _ := manifest.DeepCopy(crd).(map[string]any)
		if err := clients.ApplyDefinition(ctx, obj, helmrelease.FieldManager); err != nil {
			diags.Append(d.Error("Unable to Replace CustomResourceDefinition", fmt.Sprintf(
				"Release %s was not applied: a CustomResourceDefinition of its chart's crds/ could not be applied (crd_policy = %q). "+
					"Nothing else was changed. Fix the definition, or give the identity the right to patch customresourcedefinitions.\n\n%v",
				m.releaseID(), crdPolicyCreateReplace, err)))
			return false
		}
		names = append(names, strings.TrimPrefix(manifest.Key(crd, ""), crdKeyPrefix))
	}
	ctx, cancel := context.WithTimeout(ctx, m.timeoutDuration())
	defer cancel()
	if err := clients.WaitEstablished(ctx, names); err != nil {
		diags.Append(d.Error("CustomResourceDefinitions Not Established", fmt.Sprintf(
			"Release %s was not upgraded: its chart's CustomResourceDefinitions were applied but not established within the timeout "+
				"(kubectl describe crd names the condition that is not met). Fix the definitions, or raise timeout.\n\n%v", m.releaseID(), err)))
		return false
	}
	return true
}
