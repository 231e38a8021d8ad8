// Package drift decides what of a live object counts as drift from what a release applied,
// in one place: [Rules.Project] projects the live object onto the fields the release's
// manifest sets, and the rules ([Rules], [Ignore]) say which of those fields others decide.
// It also holds the one walker of the API server's managed fields ([ManagedFields],
// [Extract]), which the environment's drift in internal/kube uses too.
//
// The package is pure: it takes JSON-compatible objects as the API server returns them and
// returns values, with no cluster client.
package drift
