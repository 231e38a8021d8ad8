package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/environment"
)

// environmentModel is the gitlabk8s_environment resource.
type environmentModel struct {
	ID              types.String   `tfsdk:"id"`
	Name            types.String   `tfsdk:"name"`
	Slug            types.String   `tfsdk:"slug"`
	Namespace       types.String   `tfsdk:"namespace"`
	UID             types.String   `tfsdk:"uid"`
	Labels          types.Map      `tfsdk:"labels"`
	Annotations     types.Map      `tfsdk:"annotations"`
	ServiceAccount  types.Object   `tfsdk:"service_account"`
	ResourceQuota   types.Map      `tfsdk:"resource_quota"`
	LimitRange      types.Object   `tfsdk:"limit_range"`
	NetworkPolicy   types.Object   `tfsdk:"network_policy"`
	CIJobAccess     types.Object   `tfsdk:"ci_job_access"`
	RetainOnDestroy types.Bool     `tfsdk:"retain_on_destroy"`
	Manifests       types.Map      `tfsdk:"manifests"`
	Timeouts        timeouts.Value `tfsdk:"timeouts"`
}

type serviceAccountModel struct {
	Enabled types.Bool   `tfsdk:"enabled"`
	Name    types.String `tfsdk:"name"`
	Rules   []ruleModel  `tfsdk:"rules"`
}

type ruleModel struct {
	APIGroups     []string `tfsdk:"api_groups"`
	Resources     []string `tfsdk:"resources"`
	Verbs         []string `tfsdk:"verbs"`
	ResourceNames []string `tfsdk:"resource_names"`
}

type limitRangeModel struct {
	Default              map[string]string `tfsdk:"default"`
	DefaultRequest       map[string]string `tfsdk:"default_request"`
	Max                  map[string]string `tfsdk:"max"`
	Min                  map[string]string `tfsdk:"min"`
	MaxLimitRequestRatio map[string]string `tfsdk:"max_limit_request_ratio"`
}

type ciJobAccessModel struct {
	ClusterRole types.String   `tfsdk:"cluster_role"`
	Subjects    []subjectModel `tfsdk:"subjects"`
}

type subjectModel struct {
	Kind      types.String `tfsdk:"kind"`
	Name      types.String `tfsdk:"name"`
	Namespace types.String `tfsdk:"namespace"`
}

type networkPolicyModel struct {
	Enabled             types.Bool `tfsdk:"enabled"`
	AllowFromNamespaces []string   `tfsdk:"allow_from_namespaces"`
}

// specParts records which parts of a spec were known; at validate time (and
// at plan time, for values that come from other resources) some are not.
type specParts struct {
	name, namespace, labels, annotations, serviceAccount, resourceQuota, limitRange, networkPolicy, ciJobAccess bool
}

func (p specParts) all() bool {
	return p.name && p.namespace && p.labels && p.annotations && p.serviceAccount && p.resourceQuota && p.limitRange && p.networkPolicy && p.ciJobAccess
}

// fullyKnown reports whether v and everything inside it is known.
func fullyKnown(ctx context.Context, v attr.Value) bool {
	tv, err := v.ToTerraformValue(ctx)
	return err == nil && tv.IsFullyKnown()
}

// spec converts the known parts of m into an environment.Spec; the parts
// that are not fully known are left at their zero value and marked unknown.
func (m environmentModel) spec(ctx context.Context) (environment.Spec, specParts, diag.Diagnostics) {
	var (
		spec  environment.Spec
		parts specParts
		diags diag.Diagnostics
	)
	if parts.name = fullyKnown(ctx, m.Name); parts.name {
		spec.Name = m.Name.ValueString()
	}
	if parts.namespace = fullyKnown(ctx, m.Namespace); parts.namespace {
		spec.Namespace = m.Namespace.ValueString()
	}
	if parts.labels = fullyKnown(ctx, m.Labels); parts.labels && !m.Labels.IsNull() {
		diags.Append(m.Labels.ElementsAs(ctx, &spec.Labels, false)...)
	}
	if parts.annotations = fullyKnown(ctx, m.Annotations); parts.annotations && !m.Annotations.IsNull() {
		diags.Append(m.Annotations.ElementsAs(ctx, &spec.Annotations, false)...)
	}
	if parts.resourceQuota = fullyKnown(ctx, m.ResourceQuota); parts.resourceQuota && !m.ResourceQuota.IsNull() {
		diags.Append(m.ResourceQuota.ElementsAs(ctx, &spec.ResourceQuota, false)...)
	}
	if parts.serviceAccount = fullyKnown(ctx, m.ServiceAccount); parts.serviceAccount && !m.ServiceAccount.IsNull() {
		var sa serviceAccountModel
		diags.Append(m.ServiceAccount.As(ctx, &sa, basetypes.ObjectAsOptions{})...)
		spec.ServiceAccount = environment.ServiceAccountSpec{Enabled: boolPointer(sa.Enabled), Name: stringPointer(sa.Name)}
		if sa.Rules != nil {
			spec.ServiceAccount.Rules = make([]environment.Rule, len(sa.Rules))
			for i, r := range sa.Rules {
				spec.ServiceAccount.Rules[i] = environment.Rule{APIGroups: r.APIGroups, Resources: r.Resources, Verbs: r.Verbs, ResourceNames: r.ResourceNames}
			}
		}
	}
	if parts.limitRange = fullyKnown(ctx, m.LimitRange); parts.limitRange && !m.LimitRange.IsNull() {
		var lr limitRangeModel
		diags.Append(m.LimitRange.As(ctx, &lr, basetypes.ObjectAsOptions{})...)
		spec.LimitRange = &environment.LimitRangeSpec{
			Default: lr.Default, DefaultRequest: lr.DefaultRequest, Max: lr.Max, Min: lr.Min, MaxLimitRequestRatio: lr.MaxLimitRequestRatio,
		}
	}
	if parts.networkPolicy = fullyKnown(ctx, m.NetworkPolicy); parts.networkPolicy && !m.NetworkPolicy.IsNull() {
		var np networkPolicyModel
		diags.Append(m.NetworkPolicy.As(ctx, &np, basetypes.ObjectAsOptions{})...)
		spec.NetworkPolicy = environment.NetworkPolicySpec{Enabled: boolPointer(np.Enabled), AllowFromNamespaces: np.AllowFromNamespaces}
	}
	if parts.ciJobAccess = fullyKnown(ctx, m.CIJobAccess); parts.ciJobAccess && !m.CIJobAccess.IsNull() {
		var access ciJobAccessModel
		diags.Append(m.CIJobAccess.As(ctx, &access, basetypes.ObjectAsOptions{})...)
		spec.CIJobAccess = &environment.CIJobAccessSpec{ClusterRole: stringPointer(access.ClusterRole)}
		if access.Subjects != nil {
			spec.CIJobAccess.Subjects = make([]environment.Subject, len(access.Subjects))
			for i, s := range access.Subjects {
				spec.CIJobAccess.Subjects[i] = environment.Subject{Kind: s.Kind.ValueString(), Name: s.Name.ValueString(), Namespace: s.Namespace.ValueString()}
			}
		}
	}
	return spec, parts, diags
}

// validate checks the known parts of spec, as environment.Validate does for
// a complete one.
func validateKnownParts(spec environment.Spec, parts specParts) environment.Problems {
	var ps environment.Problems
	// The name has its own attribute validator.
	if parts.namespace && spec.Namespace != "" {
		ps = append(ps, environment.ValidateNamespace(spec.Namespace)...)
	}
	if parts.labels {
		ps = append(ps, environment.ValidateLabels(spec.Labels)...)
	}
	if parts.annotations {
		ps = append(ps, environment.ValidateAnnotations(spec.Annotations)...)
	}
	if parts.serviceAccount {
		ps = append(ps, environment.ValidateServiceAccount(spec.ServiceAccount)...)
	}
	if parts.resourceQuota {
		ps = append(ps, environment.ValidateResourceQuota(spec.ResourceQuota)...)
	}
	if parts.limitRange {
		ps = append(ps, environment.ValidateLimitRange(spec.LimitRange)...)
	}
	if parts.networkPolicy {
		ps = append(ps, environment.ValidateNetworkPolicy(spec.NetworkPolicy)...)
	}
	if parts.ciJobAccess {
		ps = append(ps, environment.ValidateCIJobAccess(spec.CIJobAccess)...)
	}
	return ps
}

// addProblems reports each problem on its attribute.
func addProblems(diags *diag.Diagnostics, problems environment.Problems) {
	for _, p := range problems {
		diags.AddAttributeError(attributePath(p.Path), "Invalid Environment Configuration", p.Detail)
	}
}

func attributePath(p environment.Path) path.Path {
	var out path.Path
	for i, step := range p {
		switch {
		case step.IsMapKey:
			out = out.AtMapKey(step.MapKey)
		case step.IsIndex:
			out = out.AtListIndex(step.Index)
		case i == 0:
			out = path.Root(step.Attribute)
		default:
			out = out.AtName(step.Attribute)
		}
	}
	return out
}

func boolPointer(v types.Bool) *bool {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	b := v.ValueBool()
	return &b
}

func stringPointer(v types.String) *string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	s := v.ValueString()
	return &s
}

// stringMapValue converts a Go map into a Terraform map; nil and empty maps
// become null, as an unset optional map is.
func stringMapValue(m map[string]string) types.Map {
	if len(m) == 0 {
		return types.MapNull(types.StringType)
	}
	return types.MapValueMust(types.StringType, stringValues(m))
}

func stringValues(m map[string]string) map[string]attr.Value {
	elems := make(map[string]attr.Value, len(m))
	for k, v := range m {
		elems[k] = types.StringValue(v)
	}
	return elems
}
