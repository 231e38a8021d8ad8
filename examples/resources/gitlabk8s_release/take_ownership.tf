# A release that a deploy script installed with `helm upgrade --install`, now managed here:
# the first apply upgrades the deployed revision, and the state manages it from then on.
resource "gitlabk8s_release" "legacy" {
  name           = "legacy"
  namespace      = gitlabk8s_environment.review.namespace
  chart          = "./charts/legacy"
  take_ownership = true

  set = {
    "image.tag" = var.image_tag
  }
}
