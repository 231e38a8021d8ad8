// Package helmrelease runs Helm's actions on one release: install, upgrade, rollback,
// uninstall and history, with the provider's shared cluster clients, the request's context and
// the provider's own readiness wait.
//
// Three things differ from running the helm CLI:
//
//   - Every action takes a context. Cancelling it (Ctrl-C or SIGTERM to Terraform) stops the
//     wait and the hooks at once, and the release is recorded as failed rather than left
//     pending, so the next apply can proceed.
//   - Helm's wait is replaced by one that evaluates every object with
//     [readiness.Evaluate] every second, reports progress through a callback, and fails
//     as soon as a pod crash-loops or cannot pull its image, naming the object, the reason and
//     the pod's message, instead of waiting for the timeout.
//   - A release left pending-install, pending-upgrade or pending-rollback by a killed run is
//     recovered before the next install or upgrade: a pending install is uninstalled and
//     installed again; a pending upgrade or rollback is rolled back to the last deployed revision
//     (which removes what the interrupted revision added) and then upgraded. [Decide] makes
//     that decision once, with the revision the operation will render ([Next]); the plan
//     renders that revision and [Client.Apply] carries the same decision out.
//
// Before Helm writes anything, a post-renderer ([PlanCheck]) compares the manifests Helm
// rendered with those the plan showed and aborts, naming the object, when they differ.
//
// Refresh reads the live objects of a release ([Client.LiveObjects]); package drift decides
// what of them is drift.
package helmrelease
