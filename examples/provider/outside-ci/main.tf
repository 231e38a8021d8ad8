# Outside GitLab CI (on a workstation, or in another CI system) no predefined
# CI/CD variables exist. Give the values that name the environment's
# namespace and its GitLab annotations explicitly, so a plan made here
# matches the one the pipeline makes.
provider "gitlabk8s" {
  config_path    = "~/.kube/config"
  config_context = "staging"

  gitlab = {
    project_id        = "4242"
    project_path_slug = "my-group-my-app"
  }
}
