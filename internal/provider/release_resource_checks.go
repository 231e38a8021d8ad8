package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// checkRendering refuses, at plan time, what the apply would fail on (release.Request.Check):
// API versions the target Kubernetes version does not serve (deprecated ones warn), fields the
// kinds' schemas do not accept, definitions that drop a stored version, and what a server-side
// dry run of the objects that change refuses and the pods of the hooks the apply runs that the
// Pod Security level forbids (release_resource_dryrun.go). With plan_checks =
// "all" the cluster is asked through env.checker (clusterEnvironment).
func (r *releaseResource) checkRendering(ctx context.Context, m *releaseModel, recorded *release.Recorded, env *renderEnv, planned *release.Plan, diags *diag.Diagnostics) {
	level := release.CheckLevel(m.PlanChecks.ValueString())
	checked := env.request.Check(ctx, planned, recorded, level, env.checker, env.unreachable)
	redactor := redactorFor(m)
	for _, err := range slices.Concat(checked.SchemaErrors, checked.StoredVersionErrors) {
		tflog.Warn(ctx, "not checked against the cluster's schemas or definitions", map[string]any{"release": m.releaseID(), "error": redactor.String(err.Error())})
	}
	tflog.Debug(ctx, "checked rendered objects", map[string]any{"release": m.releaseID(), "findings": len(checked.Findings),
		"kube_version": checked.Target.String(), "cluster_schemas": checked.ClusterSchemas})
	for _, f := range checked.Findings {
		addFindingDiagnostic(m, f, checked.Target, diags)
	}
	for _, dropped := range checked.Dropped {
		addDroppedDiagnostic(m, dropped, diags)
	}
	if checked.DryRun != nil {
		addDryRunDiagnostics(ctx, m, checked.DryRun, fieldsCheckedAgainst(checked.Target, checked.ClusterSchemas), diags)
	}
	addRunningPodsWarning(m, checked.Running, diags)
}

// fieldsCheckedAgainst says which schema the plan checked fields against: the cluster's, else the
// shipped one, with what that means for a target of another version.
func fieldsCheckedAgainst(target validate.Version, clusterSchemas bool) string {
	if clusterSchemas {
		return "fields against the cluster's own schemas"
	}
	shipped := validate.LibraryVersion()
	out := fmt.Sprintf("fields against the schema of Kubernetes %s the provider ships", shipped)
	switch {
	case target.IsZero() || target == shipped:
	case shipped.AtLeast(target):
		out += fmt.Sprintf(" (the target is %s: a field added after %s passes here and only the cluster refuses it)", target, target)
	default:
		out += fmt.Sprintf(" (the target is %s: a field %s does not declare only warns, as %s may have added it)", target, shipped, target)
	}
	return out
}

func addFindingDiagnostic(m *releaseModel, f validate.Finding, target validate.Version, diags *diag.Diagnostics) {
	d := m.diagnostics()
	at := path.Root("manifests").AtMapKey(f.Key)
	object := fmt.Sprintf("%s (%s %s", f.Key, f.APIVersion, f.Kind)
	if f.Source != "" {
		object += ", from " + f.Source
	}
	object += ")"
	lc := f.Lifecycle
	switch f.Problem {
	case validate.RemovedAPI:
		when := "was removed in Kubernetes " + lc.Removed.String()
		if lc.Unlisted {
			when = "is not served by Kubernetes " + lc.Removed.String() + " (removed in that version or earlier)"
		}
		diags.Append(d.AttributeError(at, "API Version Not Served", fmt.Sprintf(
			"Release %s: %s uses an API version that %s; the target is Kubernetes %s, so the apply would fail. %s",
			m.releaseID(), object, when, target, replacementAdvice(lc))))
	case validate.NotYetServedAPI:
		diags.Append(d.AttributeError(at, "API Version Not Served", fmt.Sprintf(
			"Release %s: %s uses an API version introduced in Kubernetes %s; the target is Kubernetes %s, so the apply would fail. "+
				"Use an API version the target serves, or upgrade the cluster first.", m.releaseID(), object, lc.Introduced, target)))
	case validate.DeprecatedAPI:
		when := fmt.Sprintf("is deprecated since Kubernetes %s", lc.Deprecated)
		if !lc.Removed.IsZero() && !lc.Unlisted {
			when += " and removed in " + lc.Removed.String()
		}
		if lc.Unlisted {
			when = fmt.Sprintf("is not served by Kubernetes %s any more (and may already be removed in %s)", lc.Removed, target)
		}
		diags.Append(d.AttributeWarning(at, "Deprecated API Version", fmt.Sprintf(
			"Release %s: %s uses an API version that %s. %s", m.releaseID(), object, when, replacementAdvice(lc))))
	case validate.InvalidField:
		lines := make([]string, 0, len(f.Fields))
		for _, fe := range f.Fields {
			lines = append(lines, "  "+fe.Path+": "+fe.Message)
		}
		fields := strings.Join(lines, "\n")
		if f.Uncertain {
			diags.Append(d.AttributeWarning(at, "Fields Unknown to the Shipped Schema", fmt.Sprintf(
				"Release %s: %s has fields that %s does not declare:\n%s\n\nThe target is Kubernetes %s, which may have added them. If it "+
					"did not, the API server will refuse the object or drop them. Plan with the cluster reachable (and plan_checks = \"all\") to check against its own "+
					"schema, or use a provider built for Kubernetes %s.", m.releaseID(), object, schemaName(f.Schema), fields, target, target)))
			return
		}
		advice := "Fix the template or the values that produce these fields."
		if slices.ContainsFunc(f.Fields, func(fe validate.FieldError) bool { return fe.Null }) {
			advice += " A field that is \"null\" is a key the template writes with nothing after it (`initdb:`), where the schema " +
				"wants a value. Helm 4 applies server-side, and the API server refuses a null there; Helm 3 created the object and " +
				"the API server dropped the key. Give the chart a value for it, or take the key out with patches (a JSON 6902 " +
				"\"remove\", or a \"replace\" with {})."
		}
		diags.Append(d.AttributeError(at, "Invalid Object Fields", fmt.Sprintf(
			"Release %s: %s has fields that %s does not accept, so the API server would refuse it or drop them:\n%s\n\n%s",
			m.releaseID(), object, schemaName(f.Schema), fields, advice)))
	}
}

// schemaName names the schema a field finding was checked against, for diagnostics.
func schemaName(s validate.SchemaSource) string {
	switch s {
	case validate.ClusterSchema:
		return "the cluster's schema of its kind (the API server's OpenAPI)"
	case validate.ChartCRDSchema:
		return "the chart's CustomResourceDefinition of its kind"
	case validate.DefinitionSchema:
		return "the CustomResourceDefinition of its kind in crds_from"
	default:
		return fmt.Sprintf("the schema of Kubernetes %s the provider ships", validate.LibraryVersion())
	}
}

func replacementAdvice(lc *validate.Lifecycle) string {
	if lc.Replacement != "" {
		return "Use " + lc.Replacement + " instead (update the chart, or a chart value that picks the API version)."
	}
	return "Kubernetes names no replacement: update the chart, or remove the object."
}
