# Adopt an existing namespace, e.g. one left behind by a stopped review app,
# by its name. The next apply marks it as this environment's; destroy deletes it.
terraform import gitlabk8s_environment.review group-app-42-review-feat-abc123
