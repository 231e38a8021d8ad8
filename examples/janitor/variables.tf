variable "kube_context" {
  description = "Kubeconfig context of the GitLab agent for Kubernetes the janitor uses: \"<agent configuration project path>:<agent name>\". Its identity must list, patch and delete namespaces."
  type        = string
}

variable "min_age_hours" {
  description = "Sweep only namespaces at least this many hours old, however stale: a margin for environments stopped by mistake and started again."
  type        = number
  default     = 24

  validation {
    condition     = var.min_age_hours >= 0
    error_message = "min_age_hours must be 0 or more."
  }
}
