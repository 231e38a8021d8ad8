// Package e2e runs the GitLab pipelines of examples/gitlab-ci and
// examples/janitor end to end: the real `terraform` and `tofu` command lines,
// the provider built from this checkout and installed from a filesystem mirror as `init` installs a
// published provider, a GitLab-style Terraform state server
// (internal/gitlabstate), and the local cluster (internal/testcluster).
//
// It does not interpret the pipelines itself: gitlab-ci-local, a local runner
// of GitLab pipelines, runs them (scripts/install-gitlab-ci-local.sh installs
// it). A [Pipeline] is a Git repository holding the pipeline's commit;
// gitlab-ci-local evaluates its rules, needs, extends and artifacts (not
// workflow:rules, which version 4.65 ignores), and runs each job with its shell executor in a folder of its
// own. A test runs a whole pipeline as GitLab creates it and checks which jobs
// ran, or one job by name (a manual job as if played); a job's artifacts
// stay in the pipeline for the jobs that need them, after its branch is gone
// too.
//
// The tests that drive the CLIs run only with TF_ACC set, as acceptance tests
// do; those of the runner and of the state janitor need only gitlab-ci-local.
package e2e
