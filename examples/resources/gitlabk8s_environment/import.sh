# Adopt an existing namespace, e.g. one left behind by a stopped review app,
# by its name. The next apply marks it as this environment's; destroy deletes it.
terraform import gitlabk8s_environment.review group-app-42-review-feat-abc123

# Adopt that namespace only if it is still the very one you looked at: a
# namespace deleted and created again under the same name has another UID, and
# the import refuses it. gitlabk8s_namespaces gives this ID as import_id.
terraform import gitlabk8s_environment.review "group-app-42-review-feat-abc123@$(kubectl get namespace group-app-42-review-feat-abc123 -o jsonpath='{.metadata.uid}')"
