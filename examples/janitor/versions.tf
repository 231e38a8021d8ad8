terraform {
  # import blocks with for_each: Terraform 1.7 and OpenTofu 1.7.
  required_version = ">= 1.7"

  required_providers {
    gitlabk8s = {
      # Terraform installs it from registry.terraform.io, OpenTofu from registry.opentofu.org.
      source = "gitlabk8s/gitlabk8s"
    }
  }

  # No backend: each run starts from an empty local state, finds the leftovers afresh, and ends
  # with nothing in it. A run that fails part way leaves namespaces that are marked (or already
  # terminating), which the next run finds again.
}
