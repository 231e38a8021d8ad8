package environment

import (
	"fmt"
	"maps"
	"slices"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// Environment is a resolved environment: its slug, its namespace and the
// objects that make it up.
type Environment struct {
	Name      string
	Slug      string
	Namespace string
	// Objects are in the order they are applied: the Namespace first, then
	// the CI jobs' RoleBinding (their rights for the rest), then the
	// ServiceAccount before the RoleBinding that names it.
	Objects []manifest.Object
}

// Resolve returns the slug and namespace of spec: the slug GitLab gives the
// environment (the job's CI_ENVIRONMENT_SLUG when spec.Name is the job's
// environment), and spec.Namespace or else GitLab's default namespace
// "<project path slug>-<project id>-<slug>". It does not validate.
func Resolve(spec Spec, ci gitlab.CIMetadata) (slug, namespace string) {
	slug = gitlab.SlugFor(spec.Name, ci)
	namespace = spec.Namespace
	if namespace == "" {
		namespace = gitlab.DefaultNamespace(ci.ProjectPathSlug, ci.ProjectID, slug)
	}
	return slug, namespace
}

// Build validates spec and returns the environment it describes for the CI
// job ci. The objects carry the ownership labels and annotations of package
// gitlab and the job's record annotations (gitlab.RecordAnnotations), which
// manifest.Normalize leaves out of manifests.
func Build(spec Spec, ci gitlab.CIMetadata) (Environment, Problems) {
	if ps := Validate(spec); len(ps) > 0 {
		return Environment{}, ps
	}
	slug, namespace := Resolve(spec, ci)
	if spec.Namespace == "" {
		// The default namespace is valid by construction, but an
		// environment named "default" outside CI would land in a
		// protected namespace.
		if gitlab.IsProtectedNamespace(namespace) {
			return Environment{}, Problems{{Path: Attr("namespace"), Detail: fmt.Sprintf(
				"The default namespace of environment %q is %q. %s Set namespace explicitly.", spec.Name, namespace, protectedDetail(namespace))}}
		}
	}
	b := builder{spec: spec, ci: ci, slug: slug, namespace: namespace}
	env := Environment{Name: spec.Name, Slug: slug, Namespace: namespace}
	env.Objects = append(env.Objects, b.namespaceObject())
	if spec.CIJobAccess != nil {
		binding, ps := b.ciJobRoleBinding()
		if len(ps) > 0 {
			return Environment{}, ps
		}
		env.Objects = append(env.Objects, binding)
	}
	if spec.ServiceAccountEnabled() {
		env.Objects = append(env.Objects, b.serviceAccount(), b.role(), b.roleBinding())
	}
	if len(spec.ResourceQuota) > 0 {
		env.Objects = append(env.Objects, b.resourceQuota())
	}
	if spec.LimitRange != nil {
		env.Objects = append(env.Objects, b.limitRange())
	}
	if spec.NetworkPolicyEnabled() {
		env.Objects = append(env.Objects, b.networkPolicy())
	}
	return env, nil
}

// Manifests renders the environment's objects as manifest.Manifests does,
// keyed relative to the environment's namespace.
func (e Environment) Manifests() (map[string]string, error) {
	return manifest.Manifests(e.Objects, e.Namespace, manifest.BuiltinIsNamespaced)
}

// ImportCandidates are the objects an environment in namespace may hold under
// their default names: the Namespace and every companion. Importing looks for
// these; companions with other names join on the next apply.
func ImportCandidates(namespace string) []manifest.Object {
	ref := func(apiVersion, kind, name string) manifest.Object {
		return manifest.Object{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": namespace}}
	}
	return []manifest.Object{
		{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": namespace}},
		ref(rbacAPIVersion, "RoleBinding", CIJobRoleBindingName),
		ref("v1", "ServiceAccount", DefaultServiceAccountName),
		ref(rbacAPIVersion, "Role", DefaultServiceAccountName),
		ref(rbacAPIVersion, "RoleBinding", DefaultServiceAccountName),
		ref("v1", "ResourceQuota", ResourceQuotaName),
		ref("v1", "LimitRange", LimitRangeName),
		ref(networkingAPIVersion, "NetworkPolicy", NetworkPolicyName),
	}
}

const (
	rbacGroup            = "rbac.authorization.k8s.io"
	rbacAPIVersion       = rbacGroup + "/v1"
	networkingAPIVersion = "networking.k8s.io/v1"
)

type builder struct {
	spec            Spec
	ci              gitlab.CIMetadata
	slug, namespace string
}

// metadata returns the metadata of a companion object: ownership labels and
// annotations and the job's records.
func (b builder) metadata(name string) map[string]any {
	return map[string]any{
		"name":        name,
		"namespace":   b.namespace,
		"labels":      stringMap(gitlab.OwnershipLabels(b.slug)),
		"annotations": stringMap(b.annotations()),
	}
}

func (b builder) annotations() map[string]string {
	annotations := gitlab.OwnershipAnnotations(b.spec.Name, b.slug, b.ci.ProjectPathSlug)
	maps.Copy(annotations, gitlab.RecordAnnotations(b.ci))
	return annotations
}

func (b builder) namespaceObject() manifest.Object {
	labels := maps.Clone(b.spec.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, gitlab.OwnershipLabels(b.slug))
	maps.Copy(labels, b.ciJobNamespaceLabels())
	annotations := maps.Clone(b.spec.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	maps.Copy(annotations, b.annotations())
	return manifest.Object{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata": map[string]any{
			"name":        b.namespace,
			"labels":      stringMap(labels),
			"annotations": stringMap(annotations),
		},
	}
}

func (b builder) serviceAccount() manifest.Object {
	return manifest.Object{
		"apiVersion": "v1",
		"kind":       "ServiceAccount",
		"metadata":   b.metadata(b.spec.ServiceAccountName()),
	}
}

func (b builder) role() manifest.Object {
	rules := make([]any, 0, len(b.spec.Rules()))
	for _, r := range b.spec.Rules() {
		rule := map[string]any{
			"apiGroups": stringList(r.APIGroups),
			"resources": stringList(r.Resources),
			"verbs":     stringList(r.Verbs),
		}
		if len(r.ResourceNames) > 0 {
			rule["resourceNames"] = stringList(r.ResourceNames)
		}
		rules = append(rules, rule)
	}
	return manifest.Object{
		"apiVersion": rbacAPIVersion,
		"kind":       "Role",
		"metadata":   b.metadata(b.spec.ServiceAccountName()),
		"rules":      rules,
	}
}

func (b builder) roleBinding() manifest.Object {
	name := b.spec.ServiceAccountName()
	return manifest.Object{
		"apiVersion": rbacAPIVersion,
		"kind":       "RoleBinding",
		"metadata":   b.metadata(name),
		"roleRef":    map[string]any{"apiGroup": rbacGroup, "kind": "Role", "name": name},
		"subjects": []any{
			map[string]any{"kind": "ServiceAccount", "name": name, "namespace": b.namespace},
		},
	}
}

func (b builder) resourceQuota() manifest.Object {
	return manifest.Object{
		"apiVersion": "v1",
		"kind":       "ResourceQuota",
		"metadata":   b.metadata(ResourceQuotaName),
		"spec":       map[string]any{"hard": quantities(b.spec.ResourceQuota)},
	}
}

func (b builder) limitRange() manifest.Object {
	return manifest.Object{
		"apiVersion": "v1",
		"kind":       "LimitRange",
		"metadata":   b.metadata(LimitRangeName),
		"spec":       map[string]any{"limits": []any{limitRangeItem(b.spec.LimitRange)}},
	}
}

// networkPolicy admits traffic to the namespace's pods from its own pods and
// from the namespaces in AllowFromNamespaces only. Egress is not restricted.
func (b builder) networkPolicy() manifest.Object {
	from := []any{map[string]any{"podSelector": map[string]any{}}}
	allowed := slices.Clone(b.spec.NetworkPolicy.AllowFromNamespaces)
	slices.Sort(allowed)
	for _, ns := range slices.Compact(allowed) {
		from = append(from, map[string]any{
			"namespaceSelector": map[string]any{"matchLabels": map[string]any{namespaceNameLabel: ns}},
		})
	}
	return manifest.Object{
		"apiVersion": networkingAPIVersion,
		"kind":       "NetworkPolicy",
		"metadata":   b.metadata(NetworkPolicyName),
		"spec": map[string]any{
			"podSelector": map[string]any{},
			"policyTypes": []any{"Ingress"},
			"ingress":     []any{map[string]any{"from": from}},
		},
	}
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func stringList(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
