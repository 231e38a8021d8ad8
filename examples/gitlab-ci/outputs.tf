output "namespace" {
  description = "Namespace of the environment."
  value       = gitlabk8s_environment.review.namespace
}

output "release_revision" {
  description = "Helm revision of the deployed release."
  value       = gitlabk8s_release.app.revision
}

output "release_status" {
  description = "Helm status of the release, \"deployed\" after a successful apply."
  value       = gitlabk8s_release.app.status
}

output "url" {
  description = "The first URL the release serves, for the environment's URL; empty when it serves none."
  value       = length(gitlabk8s_release.app.urls) > 0 ? gitlabk8s_release.app.urls[0] : ""
}
