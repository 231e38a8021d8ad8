# A credential plugin prints a short-lived token, as a kubeconfig's
# users[].user.exec would run it; here the AWS CLI for an EKS cluster.
variable "cluster_name" {
  type        = string
  description = "Name of the EKS cluster."
}

variable "cluster_endpoint" {
  type        = string
  description = "Address of the Kubernetes API server."
}

variable "cluster_ca_certificate" {
  type        = string
  description = "PEM-encoded CA certificate of the API server."
}

provider "gitlabk8s" {
  host                   = var.cluster_endpoint
  cluster_ca_certificate = var.cluster_ca_certificate

  exec = {
    api_version = "client.authentication.k8s.io/v1"
    command     = "aws"
    args        = ["eks", "get-token", "--cluster-name", var.cluster_name]
  }
}
