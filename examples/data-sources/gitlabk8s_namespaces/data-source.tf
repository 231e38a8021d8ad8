# Inside GitLab CI the project and the GitLab API come from the job ($CI_PROJECT_ID,
# $CI_PROJECT_PATH_SLUG, $CI_API_V4_URL and $CI_JOB_TOKEN), so no attribute is needed.
data "gitlabk8s_namespaces" "project" {}

# Namespaces whose environment GitLab stopped or deleted.
output "leftovers" {
  value = { for name, ns in data.gitlabk8s_namespaces.project.namespaces : name => ns.age if ns.stale }
}
