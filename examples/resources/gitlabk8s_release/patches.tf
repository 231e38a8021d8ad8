resource "gitlabk8s_release" "cache" {
  name      = "cache"
  namespace = gitlabk8s_environment.review.namespace
  chart     = "oci://registry.example.com/charts/cache"
  version   = "2.1.0"

  patches = [
    {
      # A strategic-merge patch: the chart has no value for a node selector or the limits.
      target = { kind = "StatefulSet", name = "cache" }
      patch  = <<-YAML
        spec:
          template:
            spec:
              nodeSelector:
                pool: review-apps
              containers:
                - name: cache
                  resources:
                    limits:
                      memory: 256Mi
      YAML
    },
    {
      # A JSON 6902 patch, for every object of the chart's app label.
      target = { label_selector = "app.kubernetes.io/name=cache" }
      patch = jsonencode([
        { op = "add", path = "/metadata/labels/example.com~1team", value = "platform" },
      ])
    },
  ]
}
