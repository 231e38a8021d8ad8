# The application of a review app, installed into the environment's namespace. The plan of a
# merge request shows every object the chart renders; for a change, only the changed lines.
resource "gitlabk8s_release" "app" {
  name      = "app"
  namespace = gitlabk8s_environment.review.namespace

  # A local chart directory; or a packaged chart ("./app-1.2.3.tgz"); or a chart in an HTTP(S)
  # repository (chart = "app", repository = "https://charts.example.com", version = "1.2.3");
  # or an OCI reference ("oci://registry.example.com/charts/app").
  chart = "${path.module}/chart"

  # Merged in order, like helm -f. Key order, indentation and comments never change the plan.
  values = [
    local.base_values,
    yamlencode({
      ingress = { host = "${gitlabk8s_environment.review.slug}.review.example.com" }
    }),
  ]

  # Like helm --set.
  set = {
    "image.tag" = var.image_tag
  }

  # Like helm --set-string, and redacted wherever the value lands in a rendered object, in
  # manifests, in diagnostics and in the provider's logs.
  set_sensitive = {
    "database.password" = var.database_password
  }

  # Sensitive YAML documents, merged after values and before set: every string and number in
  # them is redacted as set_sensitive values are, so put only secrets there. Never put a secret
  # in values: the provider would show it in manifests.
  values_sensitive = [
    yamlencode({ smtp = { password = var.smtp_password } }),
  ]

  # The defaults: a failed upgrade is rolled back and a failed first install removed; the apply
  # waits until every object is ready and fails within seconds of a crash-looping pod.
  atomic          = true
  wait            = true
  timeout         = "5m"
  max_history     = 10
  recover_pending = true
}

locals {
  base_values = <<-EOT
    replicaCount: 1
    resources:
      requests: {cpu: 100m, memory: 128Mi}
  EOT
}

resource "gitlabk8s_environment" "review" {
  name = var.environment_name
}

variable "environment_name" {
  type        = string
  description = "The GitLab environment, e.g. review/my-branch."
}

variable "image_tag" {
  type        = string
  description = "The image tag to deploy, e.g. $CI_COMMIT_SHORT_SHA."
}

variable "database_password" {
  type      = string
  sensitive = true
}

variable "smtp_password" {
  type      = string
  sensitive = true
}

output "revision" {
  value = gitlabk8s_release.app.revision
}
