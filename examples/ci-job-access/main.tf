# Each environment binds its own CI jobs in its namespace; with the cluster setup in
# cluster-setup.yaml, a job of another environment can do nothing there.
resource "gitlabk8s_environment" "review" {
  name          = var.environment_name
  ci_job_access = {}
}

variable "environment_name" {
  description = "GitLab environment name; the pipeline passes $CI_ENVIRONMENT_NAME."
  type        = string
}
