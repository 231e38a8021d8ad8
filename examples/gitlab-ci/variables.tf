variable "kube_context" {
  description = "Kubeconfig context of the GitLab agent for Kubernetes: \"<agent configuration project path>:<agent name>\"."
  type        = string
}

variable "environment_name" {
  description = "GitLab environment name, e.g. \"review/my-branch\"; the pipeline passes $CI_ENVIRONMENT_NAME."
  type        = string
}

variable "namespace" {
  description = "Namespace of the environment; the pipeline passes the name it also gives the environment's Kubernetes dashboard. Null: the provider's default, \"<project path slug>-<project id>-<environment slug>\"."
  type        = string
  default     = null
}

variable "api_key" {
  description = "Secret passed to the application; it never shows in a plan or a job log. Set it as a masked CI/CD variable TF_VAR_api_key."
  type        = string
  default     = ""
  sensitive   = true
}

variable "app_domain" {
  description = "Domain of the review apps' hosts, \"<environment slug>.<app_domain>\"; a wildcard DNS record points it at the cluster's ingress controller. Empty: no Ingress, and the environment has no URL."
  type        = string
  default     = ""
}
