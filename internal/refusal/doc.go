// Package refusal reads the API server's wording: why it refused a request (RBAC, an admission
// webhook or policy, Pod Security, quota, another admission plugin, a namespace being deleted,
// an immutable field, an invalid object, a conflict), why a workload's controller could not
// create its pods, and which Pod Security level a warning says a workload violates.
//
// It is the one place that knows those texts. It is pure: callers pass the parts of the API
// server's answer (internal/kube from client-go's status errors, internal/readiness from a
// controller's FailedCreate message, the release's dry run from the warnings of an accepted
// request) and get a class back.
package refusal
