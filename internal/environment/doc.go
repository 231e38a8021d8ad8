// Package environment turns a GitLab environment as configured into the
// complete set of Kubernetes objects that make it up: its Namespace and the
// optional companions inside it (a deploy ServiceAccount with a Role and a
// RoleBinding, a ResourceQuota, a LimitRange and a NetworkPolicy).
//
// It is pure: no cluster, no Terraform framework. [Validate] checks a [Spec]
// and returns every [Problem] with the path of the attribute at fault, so the
// provider can report bad input at validate or plan time, before anything is
// applied. [Build] resolves the slug and the namespace from the spec and the
// CI job's metadata and returns the objects in the order they are applied.
//
// The objects are rendered the way the API server stores them: quantities in
// their canonical form and LimitRange defaults filled in as the API server
// fills them. Reading back the fields the provider applied therefore gives the
// same manifests, and a plan after an apply is empty.
package environment
