# The chart's crds/ hold the operator's definitions; a new chart version brings new schemas.
resource "gitlabk8s_release" "cert_operator" {
  name       = "cert-operator"
  namespace  = gitlabk8s_environment.review.namespace
  chart      = "oci://registry.example.com/charts/cert-operator"
  version    = "1.5.0"
  crd_policy = "create_replace"
}
