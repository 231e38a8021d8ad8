terraform {
  required_version = ">= 1.6"

  required_providers {
    gitlabk8s = {
      # Terraform installs it from registry.terraform.io, OpenTofu from registry.opentofu.org.
      source = "gitlabk8s/gitlabk8s"
    }
  }

  # GitLab-managed Terraform state. Every setting comes from the pipeline (`terraform init
  # -backend-config=...` and TF_HTTP_PASSWORD), one state per environment; see .gitlab-ci.yml.
  backend "http" {}
}
