// Package gitlab holds GitLab's naming rules and the metadata this provider
// writes on Kubernetes objects.
//
// It is pure: no network, no Kubernetes client, no Terraform framework. It
// answers four questions the rest of the provider asks:
//
//   - What does GitLab call this environment? ([EnvironmentSlug], [SlugFor])
//   - Which namespace does an environment get by default? ([DefaultNamespace])
//   - Is a name acceptable? ([ValidateEnvironmentName], [ValidateNamespace],
//     [IsProtectedNamespace])
//   - Which labels and annotations mark an object as ours, and which of them
//     change on every pipeline? ([OwnedBy], [VolatileAnnotations])
//
// The CI job's context comes in through [CIMetadataFromEnv], which takes a
// getenv function so tests never touch the process environment.
package gitlab
