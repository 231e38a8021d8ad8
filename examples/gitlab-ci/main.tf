provider "gitlabk8s" {
  # The job's $KUBECONFIG, written by the GitLab agent for Kubernetes, holds this context. The
  # project, environment, pipeline and job come from the job's predefined CI/CD variables.
  config_context = var.kube_context
}

# The environment's namespace: created by the first deploy, deleted by the stop job.
resource "gitlabk8s_environment" "review" {
  name      = var.environment_name
  namespace = var.namespace
}

# The application. Its plan shows every Kubernetes object it renders and, for a change, only the
# lines that change.
resource "gitlabk8s_release" "app" {
  name      = "app"
  namespace = gitlabk8s_environment.review.namespace
  chart     = "${path.module}/chart"
  values    = [file("${path.module}/values.yaml")]

  # The review app's host: its Ingress, and the URL in `urls` the deploy job gives GitLab.
  set = var.app_domain == "" ? {} : { "ingress.host" = "${gitlabk8s_environment.review.slug}.${var.app_domain}" }

  # Redacted wherever it lands in a rendered object (here a Secret and the pod's environment).
  set_sensitive = var.api_key == "" ? {} : { apiKey = var.api_key }

  timeout = "5m"
}
