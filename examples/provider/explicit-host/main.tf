# Connect to an API server directly, without a kubeconfig: for example with
# the outputs of the configuration that created the cluster. Values unknown
# until apply are fine; the provider connects only when a resource needs it.
variable "cluster_endpoint" {
  type        = string
  description = "Address of the Kubernetes API server."
}

variable "cluster_ca_certificate" {
  type        = string
  description = "PEM-encoded CA certificate of the API server."
}

variable "deploy_token" {
  type        = string
  description = "Bearer token of the identity that deploys."
  sensitive   = true
}

provider "gitlabk8s" {
  host                   = var.cluster_endpoint
  cluster_ca_certificate = var.cluster_ca_certificate
  token                  = var.deploy_token
}
