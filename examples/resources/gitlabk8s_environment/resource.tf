# The environment of a review app: its namespace, created by the deploy job's
# apply and deleted by the stop job's destroy.
resource "gitlabk8s_environment" "review" {
  # Usually the job's $CI_ENVIRONMENT_NAME, passed as TF_VAR_environment_name.
  name = var.environment_name

  labels = {
    "pod-security.kubernetes.io/enforce" = "baseline"
  }

  # Optional: a ResourceQuota and container defaults.
  resource_quota = {
    "requests.cpu"     = "2"
    "limits.memory"    = "4Gi"
    pods               = "20"
    "count/jobs.batch" = "5"
  }
  limit_range = {
    default_request = { cpu = "100m", memory = "128Mi" }
    default         = { cpu = "500m", memory = "512Mi" }
  }

  # Created by default: only pods of this namespace and of the ingress
  # controller's namespace may connect.
  network_policy = {
    allow_from_namespaces = ["ingress-nginx"]
  }

  # Created by default: a "deploy" ServiceAccount with rights in this namespace only.
  service_account = {
    name = "deploy"
  }

  timeouts {
    delete = "10m"
  }
}

variable "environment_name" {
  type        = string
  description = "The GitLab environment, e.g. review/my-branch."
}

output "namespace" {
  value = gitlabk8s_environment.review.namespace
}
