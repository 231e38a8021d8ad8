package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// checkRendering refuses, at plan time, what the apply would fail on: API versions the
// target Kubernetes version does not serve (deprecated ones warn) and fields the kinds'
// schemas do not accept. The target version is kube_version when set, else the cluster's. The
// schemas are the cluster's own when it can be reached (plan_checks = "all"), else those the
// provider ships. Then the objects that change are dry-run on the cluster
// (release_resource_dryrun.go).
func (r *releaseResource) checkRendering(ctx context.Context, m, state *releaseModel, env *renderEnv, rendered *release.Rendering, diags *diag.Diagnostics) {
	level := m.PlanChecks.ValueString()
	if level == planChecksNone {
		return
	}
	objs := checkedObjects(m, rendered)
	target, err := validate.ParseVersion(env.kubeVersion)
	if err != nil {
		// Helm's defaults stand in for an unknown cluster: only the schemas are checked.
		target = validate.Version{}
	}
	opts := validate.Options{Target: target, Definitions: m.definitions()}
	cluster := planCluster{err: errors.New("the provider has no cluster connection")}
	if level == planChecksAll {
		if cluster.clients, cluster.err = r.data.connect(ctx); cluster.err == nil {
			opts.Server = clusterSchemas(ctx, m, cluster.clients, objs)
		}
	}
	cluster.fields = fieldsCheckedAgainst(target, len(opts.Server) > 0)
	findings := validate.Check(objs, opts)
	tflog.Debug(ctx, "checked rendered objects", map[string]any{"release": m.releaseID(), "objects": len(objs), "findings": len(findings),
		"kube_version": target.String(), "cluster_schemas": len(opts.Server)})
	for _, f := range findings {
		addFindingDiagnostic(m, f, target, diags)
	}
	checkStoredVersions(ctx, m, state, rendered, cluster.clients, diags)
	if !diags.HasError() && level == planChecksAll {
		defined := validate.DefinedKinds(slices.Concat(objs, opts.Definitions))
		r.dryRunChanges(ctx, m, state, env, rendered, cluster, defined, diags)
	}
}

// planCluster is what the plan's checks got from the cluster.
type planCluster struct {
	// clients is nil when the cluster could not be reached; err says why.
	clients *kube.Clients
	err     error
	// fields says which schema the fields were checked against, for the warning that names what
	// the plan could not check.
	fields string
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

// checkedObjects pairs every rendered object (CRDs, objects, hooks) with its manifest key and
// chart file.
func checkedObjects(m *releaseModel, rendered *release.Rendering) []validate.Object {
	redactor := redactorFor(m)
	namespace := m.Namespace.ValueString()
	r := rendered.Rendered
	objs := make([]validate.Object, 0, len(r.CRDs)+len(r.Objects)+len(r.Hooks))
	add := func(items []manifest.Object, sources []string) {
		for i, o := range items {
			var source string
			if i < len(sources) {
				source = sources[i]
			}
			objs = append(objs, validate.Object{Key: redactor.Key(o, namespace), Source: source, Object: o})
		}
	}
	add(r.CRDs, r.CRDSources)
	add(r.Objects, r.ObjectSources)
	add(r.Hooks, r.HookSources)
	return objs
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
		diags.Append(d.AttributeError(at, "Invalid Object Fields", fmt.Sprintf(
			"Release %s: %s has fields that %s does not accept, so the API server would refuse it or drop them:\n%s\n\n"+
				"Fix the template or the values that produce these fields.", m.releaseID(), object, schemaName(f.Schema), fields)))
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
