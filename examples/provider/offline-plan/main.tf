# A merge-request pipeline that has no cluster credentials can still plan
# releases: charts are rendered offline, and .Capabilities comes from the
# Kubernetes version and API versions pinned here instead of the cluster.
# Keep them in step with the cluster the changes are applied to.
provider "gitlabk8s" {
  kube_version = "1.37.2"
  api_versions = [
    "monitoring.coreos.com/v1",
    "cert-manager.io/v1",
  ]
}
