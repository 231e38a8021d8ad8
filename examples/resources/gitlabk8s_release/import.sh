# Take over a release installed with `helm install`, by <namespace>/<name> as
# `helm list --all-namespaces` shows them.
terraform import gitlabk8s_release.app group-app-42-review-feat-abc123/app
