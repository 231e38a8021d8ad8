# The chart's test hooks gate the deploy: a failing smoke test fails the deploy job, naming its
# pod and the end of its log, and atomic rolls the revision back.
resource "gitlabk8s_release" "api" {
  name      = "api"
  namespace = gitlabk8s_environment.review.namespace
  chart     = "./charts/api"
  atomic    = true
  run_tests = true
}
