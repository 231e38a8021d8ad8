// Package manifest turns rendered Kubernetes objects into the text a plan
// shows: one canonical YAML manifest per object, keyed by a stable name, with
// server-set fields dropped, sensitive values redacted, and line diffs
// between two sets of manifests.
//
// It is pure: no cluster, no Helm client, no Terraform framework, no file
// I/O. Objects are unstructured ([Object]), the same shape as
// unstructured.Unstructured.Object.
//
// # From rendered YAML to a diff
//
// [SplitDocuments] parses multi-document YAML such as Helm's rendered
// manifest into objects. [Manifests] normalizes ([Normalize]), redacts
// ([Redactor]) and renders ([Render]) each of them and keys the result by
// [Key]. [DiffManifests] compares two such maps, and [FormatChanges] prints
// the comparison for a person.
//
// # Keys
//
// Every object is identified by a key of the form
//
//	<Kind>[.<group>]/[<namespace>/]<name>
//
// The group is the API group of apiVersion and is left out for the core
// group ("v1"); the version is never part of the key, so moving an object
// from v1beta1 to v1 is an update, not a delete and an add. The namespace
// segment appears only when the object's namespace is set and differs from
// the namespace the keys are relative to (the environment's namespace), so
// keys stay short and do not change when an environment is renamed.
// Kubernetes names never contain '/', so a key has one reading. Examples:
//
//	Deployment.apps/web
//	ConfigMap/web-config
//	Namespace/review-x
//	Role.rbac.authorization.k8s.io/deployer
//	ConfigMap/monitoring/web-dashboards  (namespace "monitoring", not the default)
//
// # Secrets
//
// Values of a Secret's data and stringData never reach the output; each is
// replaced by a marker carrying a short hash of the decoded value, so a
// change is visible and the value is not. Every other string that contains a
// sensitive value, or its base64 encoding, has the occurrence replaced too.
// See [Redactor].
package manifest
