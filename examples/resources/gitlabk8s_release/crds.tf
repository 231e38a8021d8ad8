# The operator's chart installs the CustomResourceDefinitions (in crds/ or in its templates).
resource "gitlabk8s_release" "operator" {
  name      = "certs"
  namespace = gitlabk8s_environment.review.namespace
  chart     = "oci://registry.example.com/charts/cert-operator"
  version   = "1.4.0"
}

# The app creates objects of their kinds. crds_from orders the two releases, lets the plan
# check the app's custom resources before the cluster serves their kinds, and makes the apply
# wait until the definitions are established.
resource "gitlabk8s_release" "web" {
  name      = "web"
  namespace = gitlabk8s_environment.review.namespace
  chart     = "oci://registry.example.com/charts/web"
  version   = "2.3.0"
  crds_from = gitlabk8s_release.operator.crds
}
