provider "gitlabk8s" {
  # The project and GitLab's API come from the job's predefined CI/CD variables: CI_PROJECT_ID,
  # CI_PROJECT_PATH_SLUG, CI_API_V4_URL and CI_JOB_TOKEN.
  config_context = var.kube_context
}

# This project's namespaces: those the provider marked and those with the names GitLab's
# certificate-based integration gave its environments. Nothing else is ever listed.
data "gitlabk8s_namespaces" "project" {}

locals {
  # The leftovers: GitLab stopped or deleted their environment. A namespace whose environment is
  # available (or stopping, or that is already terminating) is never stale.
  leftovers = {
    for name, ns in data.gitlabk8s_namespaces.project.namespaces : name => ns
    if ns.stale && ns.age_seconds >= var.min_age_hours * 3600
  }
}

# Adopt every leftover. The import ID pins the namespace's UID, so a namespace deleted and
# created again since it was listed is not adopted.
import {
  for_each = local.leftovers
  to       = gitlabk8s_environment.leftover[each.key]
  id       = each.value.import_id
}

resource "gitlabk8s_environment" "leftover" {
  for_each = local.leftovers

  # The name the namespace's marker or GitLab knows; for a historical namespace of a deleted
  # environment, its slug (or its own name when even that was cut).
  name      = coalesce(each.value.environment_name, each.value.environment_slug, each.key)
  namespace = each.key

  # Adoption marks the namespace only; nothing is added to it on its way out.
  service_account = { enabled = false }
  network_policy  = { enabled = false }
}

output "leftovers" {
  description = "The namespaces this run adopts, and destroys in its next step."
  value       = { for name, ns in local.leftovers : name => "${ns.rule}, ${ns.gitlab_state}, ${ns.age} old" }
}
