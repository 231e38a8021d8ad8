package environment

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
)

// Validate returns every problem of spec, each with the attribute at fault.
// The provider calls the parts (ValidateName, ValidateResourceQuota, ...) on
// the values it already knows at validate time; Validate runs them all.
func Validate(spec Spec) Problems {
	var ps Problems
	ps = append(ps, ValidateName(spec.Name)...)
	if spec.Namespace != "" {
		ps = append(ps, ValidateNamespace(spec.Namespace)...)
	}
	ps = append(ps, ValidateLabels(spec.Labels)...)
	ps = append(ps, ValidateAnnotations(spec.Annotations)...)
	ps = append(ps, ValidateServiceAccount(spec.ServiceAccount)...)
	ps = append(ps, ValidateResourceQuota(spec.ResourceQuota)...)
	ps = append(ps, ValidateLimitRange(spec.LimitRange)...)
	ps = append(ps, ValidateNetworkPolicy(spec.NetworkPolicy)...)
	ps = append(ps, ValidateCIJobAccess(spec.CIJobAccess)...)
	return ps
}

// ValidateName checks the GitLab environment name.
func ValidateName(name string) Problems {
	if err := gitlab.ValidateEnvironmentName(name); err != nil {
		return Problems{{Path: Attr("name"), Detail: capitalize(err.Error()) + "."}}
	}
	return nil
}

// ValidateNamespace checks an explicitly set namespace: a DNS label of at
// most 63 characters, and not one of gitlab.ProtectedNamespaces.
func ValidateNamespace(ns string) Problems {
	if err := gitlab.ValidateNamespace(ns); err != nil {
		return Problems{{Path: Attr("namespace"), Detail: capitalize(err.Error()) + "."}}
	}
	if gitlab.IsProtectedNamespace(ns) {
		return Problems{{Path: Attr("namespace"), Detail: protectedDetail(ns)}}
	}
	return nil
}

func protectedDetail(ns string) string {
	return fmt.Sprintf("Namespace %q is one of the namespaces Kubernetes itself relies on (%s); an environment can never create, adopt or delete it. Choose another namespace.",
		ns, strings.Join(gitlab.ProtectedNamespaces, ", "))
}

// ProviderLabels are the Namespace labels the provider sets itself; the
// labels attribute cannot set them.
var ProviderLabels = []string{gitlab.LabelManagedBy, gitlab.LabelEnvironmentSlug, namespaceNameLabel, gitlab.LabelProjectID}

// namespaceNameLabel is set on every namespace by the API server.
const namespaceNameLabel = "kubernetes.io/metadata.name"

// ProviderAnnotations are the annotations the provider sets itself; the
// annotations attribute cannot set them.
var ProviderAnnotations = append([]string{gitlab.AnnotationEnvironment, gitlab.AnnotationGitLabEnv, gitlab.AnnotationGitLabApp}, gitlab.VolatileAnnotations...)

// ValidateLabels checks the Namespace labels given by the user.
func ValidateLabels(labels map[string]string) Problems {
	var ps Problems
	for _, key := range sortedKeys(labels) {
		path := Attr("labels").Key(key)
		if slices.Contains(ProviderLabels, key) {
			ps.add(path, "The label %s is set by the provider (or the API server) and cannot be set here; the provider-set labels are %s.", key, strings.Join(ProviderLabels, ", "))
			continue
		}
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			ps.add(path, "%q is not a valid label key: %s.", key, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(labels[key]); len(errs) > 0 {
			ps.add(path, "%q is not a valid value for label %s: %s.", labels[key], key, strings.Join(errs, "; "))
		}
	}
	return ps
}

// ValidateAnnotations checks the Namespace annotations given by the user.
func ValidateAnnotations(annotations map[string]string) Problems {
	var ps Problems
	total := 0
	for _, key := range sortedKeys(annotations) {
		path := Attr("annotations").Key(key)
		total += len(key) + len(annotations[key])
		if slices.Contains(ProviderAnnotations, key) {
			ps.add(path, "The annotation %s is set by the provider and cannot be set here; the provider-set annotations are %s.", key, strings.Join(ProviderAnnotations, ", "))
			continue
		}
		if errs := validation.IsQualifiedName(strings.ToLower(key)); len(errs) > 0 {
			ps.add(path, "%q is not a valid annotation key: %s.", key, strings.Join(errs, "; "))
		}
	}
	if total > maxAnnotationsSize {
		ps.add(Attr("annotations"), "The annotations are %d bytes long; Kubernetes accepts at most %d bytes.", total, maxAnnotationsSize)
	}
	return ps
}

// maxAnnotationsSize is the API server's limit on an object's annotations.
const maxAnnotationsSize = 256 * 1024

// KnownVerbs are the RBAC verbs that apply to namespaced resources.
var KnownVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "escalate", "bind", "impersonate", "use", "*"}

// ValidateServiceAccount checks the service_account settings.
func ValidateServiceAccount(sa ServiceAccountSpec) Problems {
	var ps Problems
	base := Attr("service_account")
	disabled := sa.Enabled != nil && !*sa.Enabled
	if disabled && sa.Name != nil {
		ps.add(base.Attr("name"), "service_account.enabled is false, so no ServiceAccount is created and its name would be unused. Remove name, or set enabled to true.")
	}
	if disabled && sa.Rules != nil {
		ps.add(base.Attr("rules"), "service_account.enabled is false, so no Role is created and its rules would be unused. Remove rules, or set enabled to true.")
	}
	if sa.Name != nil {
		if errs := validation.IsDNS1123Subdomain(*sa.Name); len(errs) > 0 {
			ps.add(base.Attr("name"), "%q is not a valid ServiceAccount name: %s.", *sa.Name, strings.Join(errs, "; "))
		}
	}
	if sa.Rules != nil && len(sa.Rules) == 0 {
		ps.add(base.Attr("rules"), "rules is empty, which would give the ServiceAccount no rights at all. Omit rules for the default rules, list the rules it needs, or set enabled to false.")
	}
	for i, rule := range sa.Rules {
		path := base.Attr("rules").Index(i)
		if len(rule.APIGroups) == 0 {
			ps.add(path.Attr("api_groups"), `api_groups must list at least one API group; "" is the core group (Pods, Services, ConfigMaps, Secrets).`)
		}
		if len(rule.Resources) == 0 {
			ps.add(path.Attr("resources"), "resources must list at least one resource, e.g. deployments.")
		}
		if len(rule.Verbs) == 0 {
			ps.add(path.Attr("verbs"), "verbs must list at least one verb: %s.", strings.Join(KnownVerbs, ", "))
		}
		for j, verb := range rule.Verbs {
			if !slices.Contains(KnownVerbs, verb) {
				ps.add(path.Attr("verbs").Index(j), "%q is not an RBAC verb; the verbs are %s.", verb, strings.Join(KnownVerbs, ", "))
			}
		}
	}
	return ps
}

// ValidateResourceQuota checks the resource_quota map: known resource names
// and valid, non-negative quantities, whole numbers where objects are counted.
func ValidateResourceQuota(quota map[string]string) Problems {
	var ps Problems
	for _, name := range sortedKeys(quota) {
		path := Attr("resource_quota").Key(name)
		known, integer := quotaResourceKind(name)
		if !known {
			ps.add(path, "%q is not a ResourceQuota resource name. Kubernetes knows %s, and %s.",
				name, strings.Join(StandardQuotaResources, ", "), strings.Join(QuotaResourcePatterns, ", "))
			continue
		}
		q, err := parseQuantity(quota[name])
		if err != nil {
			ps.add(path, "The quota for %s: %s.", name, err)
			continue
		}
		if integer && q.MilliValue()%1000 != 0 {
			ps.add(path, "The quota for %s is %q, but %s counts whole objects; use a whole number.", name, quota[name], name)
		}
	}
	return ps
}

// ValidateNetworkPolicy checks the network_policy settings.
func ValidateNetworkPolicy(np NetworkPolicySpec) Problems {
	var ps Problems
	path := Attr("network_policy").Attr("allow_from_namespaces")
	if np.Enabled != nil && !*np.Enabled && len(np.AllowFromNamespaces) > 0 {
		ps.add(path, "network_policy.enabled is false, so nothing is isolated and allow_from_namespaces would be unused. Remove allow_from_namespaces, or set enabled to true.")
	}
	for _, ns := range np.AllowFromNamespaces {
		if err := gitlab.ValidateNamespace(ns); err != nil {
			ps.add(path, "%s.", capitalize(err.Error()))
		}
	}
	return ps
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
