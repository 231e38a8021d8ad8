package kube

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// builtinResource is the REST resource of a kind built into Kubernetes, and whether it is
// namespaced.
type builtinResource struct {
	resource   string
	namespaced bool
}

// builtinResources are the stable kinds built into Kubernetes that environments and charts
// use most, at the group versions every supported Kubernetes version serves, by the resource
// each maps to. Their mapping never changes, so it is known without discovery: an
// environment's reads and a release's reads and writes of these kinds go out while discovery
// is still being read, which through the GitLab agent's tunnel saves a round trip of every
// refresh. Every other kind, and every version not listed, is mapped by discovery. A test
// checks each entry against the API server's own discovery.
var builtinResources = map[schema.GroupVersionKind]builtinResource{
	{Version: "v1", Kind: "ConfigMap"}:             {"configmaps", true},
	{Version: "v1", Kind: "Endpoints"}:             {"endpoints", true},
	{Version: "v1", Kind: "LimitRange"}:            {"limitranges", true},
	{Version: "v1", Kind: "Namespace"}:             {"namespaces", false},
	{Version: "v1", Kind: "PersistentVolume"}:      {"persistentvolumes", false},
	{Version: "v1", Kind: "PersistentVolumeClaim"}: {"persistentvolumeclaims", true},
	{Version: "v1", Kind: "Pod"}:                   {"pods", true},
	{Version: "v1", Kind: "PodTemplate"}:           {"podtemplates", true},
	{Version: "v1", Kind: "ReplicationController"}: {"replicationcontrollers", true},
	{Version: "v1", Kind: "ResourceQuota"}:         {"resourcequotas", true},
	{Version: "v1", Kind: "Secret"}:                {"secrets", true},
	{Version: "v1", Kind: "Service"}:               {"services", true},
	{Version: "v1", Kind: "ServiceAccount"}:        {"serviceaccounts", true},

	{Group: "apps", Version: "v1", Kind: "ControllerRevision"}: {"controllerrevisions", true},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}:          {"daemonsets", true},
	{Group: "apps", Version: "v1", Kind: "Deployment"}:         {"deployments", true},
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"}:         {"replicasets", true},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"}:        {"statefulsets", true},

	{Group: "batch", Version: "v1", Kind: "CronJob"}: {"cronjobs", true},
	{Group: "batch", Version: "v1", Kind: "Job"}:     {"jobs", true},

	{Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler"}: {"horizontalpodautoscalers", true},
	{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}: {"horizontalpodautoscalers", true},

	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}: {"poddisruptionbudgets", true},

	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}:       {"ingresses", true},
	{Group: "networking.k8s.io", Version: "v1", Kind: "IngressClass"}:  {"ingressclasses", false},
	{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"}: {"networkpolicies", true},

	{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}: {"endpointslices", true},

	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}:        {"clusterroles", false},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}: {"clusterrolebindings", false},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}:               {"roles", true},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}:        {"rolebindings", true},

	{Group: "storage.k8s.io", Version: "v1", Kind: "CSIDriver"}:    {"csidrivers", false},
	{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"}: {"storageclasses", false},

	{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"}: {"priorityclasses", false},
	{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}:       {"leases", true},
	{Group: "node.k8s.io", Version: "v1", Kind: "RuntimeClass"}:        {"runtimeclasses", false},

	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration"}:   {"mutatingwebhookconfigurations", false},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}: {"validatingwebhookconfigurations", false},

	{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}: {"customresourcedefinitions", false},
}

// builtinFirstMapper answers RESTMapping for one version of a kind in builtinResources
// without discovery, and hands every other question to the discovery mapper.
type builtinFirstMapper struct {
	meta.ResettableRESTMapper
}

// RESTMapping maps a built-in kind asked for at one listed version from the table, else asks
// discovery.
func (m builtinFirstMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) == 1 {
		gvk := gk.WithVersion(versions[0])
		if r, ok := builtinResources[gvk]; ok {
			scope := meta.RESTScopeRoot
			if r.namespaced {
				scope = meta.RESTScopeNamespace
			}
			return &meta.RESTMapping{Resource: gvk.GroupVersion().WithResource(r.resource), GroupVersionKind: gvk, Scope: scope}, nil
		}
	}
	return m.ResettableRESTMapper.RESTMapping(gk, versions...)
}
