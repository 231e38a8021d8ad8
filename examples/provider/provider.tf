terraform {
  required_providers {
    gitlabk8s = {
      source  = "gitlabk8s/gitlabk8s"
      version = "~> 0.1"
    }
  }
}

# In a GitLab CI job that uses the GitLab agent for Kubernetes, $KUBECONFIG
# already holds one context per agent the project may use, named
# "<agent configuration project path>:<agent name>". Pick one; everything
# else (project, environment, pipeline) is read from the job's predefined
# CI/CD variables.
provider "gitlabk8s" {
  config_context = "my-group/cluster-config:review"
}
