// Package planreport turns the JSON of a saved plan (`terraform show -json`)
// into a Markdown report for a merge request: per release and environment,
// the Kubernetes objects the plan adds, removes and changes, a changed object
// with only its changed lines and the YAML keys above them.
//
// It reads nothing from the plan but the `manifests` attribute of
// gitlabk8s_release and gitlabk8s_environment resources (which the provider
// has already redacted: a Secret's values read as the plan's markers), the
// resources' addresses, actions and the names of the attributes that force a
// replacement. `terraform show -json` holds `set_sensitive`, sensitive
// variables and every other attribute in clear text, so the decoder keeps
// only those fields; an entry the plan itself marks sensitive shows as
// `(sensitive value)`, as the plan shows it.
//
// It is pure: no file, network or cluster I/O, no Terraform framework.
package planreport
