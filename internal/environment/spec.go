package environment

// Names of the companion objects and their defaults. They are documented in
// the resource's attribute descriptions, which are built from these values.
const (
	// DefaultServiceAccountName names the deploy ServiceAccount, its Role and its
	// RoleBinding when service_account.name is unset.
	DefaultServiceAccountName = "deploy"
	// ResourceQuotaName names the ResourceQuota made from resource_quota.
	ResourceQuotaName = "gitlabk8s-environment"
	// LimitRangeName names the LimitRange made from limit_range.
	LimitRangeName = "gitlabk8s-environment"
	// NetworkPolicyName names the NetworkPolicy that isolates the namespace.
	NetworkPolicyName = "gitlabk8s-isolation"
)

// Spec is an environment as configured. Nil pointers and nil maps or slices
// mean "not set" and select the documented defaults.
type Spec struct {
	// Name is the GitLab environment name, e.g. "review/feature-x".
	Name string
	// Namespace is set explicitly, or "" for the default namespace.
	Namespace string
	// Labels and Annotations are added to the Namespace.
	Labels      map[string]string
	Annotations map[string]string

	ServiceAccount ServiceAccountSpec
	// ResourceQuota maps quota resource names to quantities; empty means no
	// ResourceQuota.
	ResourceQuota map[string]string
	// LimitRange is nil for no LimitRange.
	LimitRange    *LimitRangeSpec
	NetworkPolicy NetworkPolicySpec
	// CIJobAccess is nil for no CI job RoleBinding.
	CIJobAccess *CIJobAccessSpec
}

// ServiceAccountSpec configures the deploy ServiceAccount, Role and RoleBinding.
type ServiceAccountSpec struct {
	// Enabled is nil for the default, true.
	Enabled *bool
	// Name is nil for [DefaultServiceAccountName].
	Name *string
	// Rules are the Role's rules; nil selects [DefaultRules].
	Rules []Rule
}

// Rule is one rule of the deploy Role, as in rbac.authorization.k8s.io/v1.
type Rule struct {
	APIGroups     []string
	Resources     []string
	Verbs         []string
	ResourceNames []string
}

// LimitRangeSpec holds the Container limits of the LimitRange, each a map of
// resource name (cpu, memory, ...) to quantity.
type LimitRangeSpec struct {
	Default              map[string]string
	DefaultRequest       map[string]string
	Max                  map[string]string
	Min                  map[string]string
	MaxLimitRequestRatio map[string]string
}

// NetworkPolicySpec configures the NetworkPolicy that isolates the namespace.
type NetworkPolicySpec struct {
	// Enabled is nil for the default, true.
	Enabled *bool
	// AllowFromNamespaces lists the other namespaces whose pods may connect to
	// the environment's pods, e.g. the ingress controller's.
	AllowFromNamespaces []string
}

// ServiceAccountEnabled reports whether the deploy ServiceAccount is created.
func (s Spec) ServiceAccountEnabled() bool {
	return s.ServiceAccount.Enabled == nil || *s.ServiceAccount.Enabled
}

// ServiceAccountName is the name of the deploy ServiceAccount, Role and RoleBinding.
func (s Spec) ServiceAccountName() string {
	if s.ServiceAccount.Name == nil {
		return DefaultServiceAccountName
	}
	return *s.ServiceAccount.Name
}

// Rules are the deploy Role's rules.
func (s Spec) Rules() []Rule {
	if s.ServiceAccount.Rules == nil {
		return DefaultRules()
	}
	return s.ServiceAccount.Rules
}

// NetworkPolicyEnabled reports whether the NetworkPolicy is created.
func (s Spec) NetworkPolicyEnabled() bool {
	return s.NetworkPolicy.Enabled == nil || *s.NetworkPolicy.Enabled
}

// readWriteVerbs are every verb on a namespaced resource short of escalate,
// bind and impersonate; a Role using "*" could not be created by an identity
// holding only the built-in admin role.
var readWriteVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

var readVerbs = []string{"get", "list", "watch"}

// DefaultRules are the deploy Role's rules when service_account.rules is
// unset: full rights on the namespaced resources an application deployment
// uses, read access to pod logs and events. They leave out Roles,
// RoleBindings, NetworkPolicies, ResourceQuotas and LimitRanges, so the
// deploy identity cannot widen its own rights or lift the environment's
// isolation and limits. A Role is namespaced, so none of this reaches beyond
// the environment's namespace.
func DefaultRules() []Rule {
	return []Rule{
		{APIGroups: []string{""}, Resources: []string{"configmaps", "persistentvolumeclaims", "pods", "secrets", "serviceaccounts", "services"}, Verbs: readWriteVerbs},
		{APIGroups: []string{""}, Resources: []string{"events", "pods/log"}, Verbs: readVerbs},
		{APIGroups: []string{"apps"}, Resources: []string{"daemonsets", "deployments", "replicasets", "statefulsets"}, Verbs: readWriteVerbs},
		{APIGroups: []string{"batch"}, Resources: []string{"cronjobs", "jobs"}, Verbs: readWriteVerbs},
		{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers"}, Verbs: readWriteVerbs},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: readWriteVerbs},
		{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: readWriteVerbs},
	}
}
