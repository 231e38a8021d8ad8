// Package e2e runs the GitLab pipelines of examples/gitlab-ci and
// examples/janitor end to end: the real `terraform` and `tofu` command lines,
// the provider built from this checkout and installed from a filesystem mirror as `init` installs a
// published provider, a GitLab-style Terraform state server
// (internal/gitlabstate), and the local cluster (internal/testcluster).
//
// It does not re-type the pipeline's commands: [LoadCIConfig] reads the
// example's .gitlab-ci.yml and a [Pipeline] runs its jobs' scripts with bash,
// the way a GitLab runner's shell executor does: variables merged and
// expanded by GitLab's precedence, `extends` resolved, a fresh project
// folder per job holding a checkout of the pipeline's commit (or nothing,
// with GIT_STRATEGY none) plus the artifacts of the jobs it needs.
//
// The tests run only with TF_ACC set, as acceptance tests do.
package e2e
