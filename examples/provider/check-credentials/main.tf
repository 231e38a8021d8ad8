# Check which cluster and identity a pipeline's credentials reach before
# anything else is planned. The data source connects to the cluster, so the
# plan fails early, naming the host and context, when the credentials are
# wrong.
provider "gitlabk8s" {}

data "gitlabk8s_cluster" "current" {}

output "cluster" {
  description = "API server, kubeconfig context, server version and the user the provider acts as."
  value = {
    host           = data.gitlabk8s_cluster.current.host
    context        = data.gitlabk8s_cluster.current.context
    server_version = data.gitlabk8s_cluster.current.server_version
    username       = data.gitlabk8s_cluster.current.username
  }
}
