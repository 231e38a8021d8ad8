// Package validate checks rendered Kubernetes objects the way the API server
// would before anything is applied: API versions the target Kubernetes
// version no longer serves (or will stop serving), and fields that are not in
// the kind's schema or have the wrong type.
//
// It is pure: no cluster, no Terraform framework. The data it checks against
// ships with the Kubernetes libraries the provider is built with:
//
//   - API lifecycles are read from the types registered in client-go's scheme
//     (every group of k8s.io/api) and apiextensions-apiserver's, through the
//     APILifecycleIntroduced/Deprecated/Removed/Replacement methods Kubernetes
//     generates into them (zz_generated.prerelease-lifecycle.go). A kind of a
//     built-in group that the libraries no longer hold at all (policy/v1beta1
//     PodSecurityPolicy) was removed before the libraries' own Kubernetes
//     version: see [Lifecycle].
//   - Built-in kinds are checked against the structured-merge-diff schema
//     client-go generates from Kubernetes' OpenAPI (the one server-side apply
//     uses): unknown fields and type mismatches, each with its field path.
//   - When the caller has the API server's OpenAPI v3 documents (it fetched
//     them; this package does no I/O), the kinds they define are checked
//     against them instead, in the same way ([ServerSchema]): built-in kinds as
//     that server's version has them, and custom resources of the definitions
//     installed there.
//   - Custom resources whose CustomResourceDefinition is among the objects
//     checked are validated against that definition's schema with the API
//     server's own code (k8s.io/apiextensions-apiserver): unknown fields are
//     the ones it would prune, the rest is its OpenAPI validation.
//
// Objects of kinds it does not know (custom resources defined elsewhere, with
// no server schema given) are not checked; the server-side dry run covers them
// when a cluster is there.
package validate
