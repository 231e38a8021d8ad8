package gitlab

import "slices"

// Labels and annotations the provider writes.
//
// Ownership: an object belongs to an environment when it carries the label
// LabelManagedBy=ManagedByValue and the annotation AnnotationEnvironment set
// to the environment's name. The name lives in an annotation because GitLab
// environment names (spaces, '/', '$', up to 255 characters) are not valid
// label values. The slug goes in the label LabelEnvironmentSlug so objects of
// one environment can be selected; it is derived from the name, so it is not
// part of the ownership check.
//
// GitLab: AnnotationGitLabEnv and AnnotationGitLabApp are the annotations
// GitLab's deploy boards look for, set to the environment slug and the
// project path slug.
//
// Records: the annotations in [VolatileAnnotations] say which pipeline, job,
// commit and merge request applied an object last.
const (
	LabelManagedBy        = "app.kubernetes.io/managed-by"
	ManagedByValue        = "gitlabk8s"
	AnnotationEnvironment = "gitlabk8s.io/environment"
	LabelEnvironmentSlug  = "gitlabk8s.io/environment-slug"
	// LabelProjectID carries the GitLab project ID on a namespace whose CI
	// jobs are bound in it; with LabelEnvironmentSlug it names the
	// environment's job group, [ProjectEnvironmentGroup].
	LabelProjectID = "gitlabk8s.io/project-id"

	AnnotationGitLabEnv = "app.gitlab.com/env"
	AnnotationGitLabApp = "app.gitlab.com/app"

	AnnotationPipelineURL     = "gitlabk8s.io/pipeline-url"
	AnnotationJobURL          = "gitlabk8s.io/job-url"
	AnnotationCommitSHA       = "gitlabk8s.io/commit-sha"
	AnnotationMergeRequestIID = "gitlabk8s.io/merge-request-iid"
)

// VolatileAnnotations are written on every apply and change with every
// pipeline. They must never make a plan non-empty, so renderers leave them
// out of the manifests they show and compare.
var VolatileAnnotations = []string{
	AnnotationPipelineURL,
	AnnotationJobURL,
	AnnotationCommitSHA,
	AnnotationMergeRequestIID,
}

// IsVolatileAnnotation reports whether key is one of [VolatileAnnotations].
func IsVolatileAnnotation(key string) bool {
	return slices.Contains(VolatileAnnotations, key)
}

// OwnershipLabels returns the labels that mark an object as managed by the
// provider for the environment with slug envSlug.
func OwnershipLabels(envSlug string) map[string]string {
	return map[string]string{
		LabelManagedBy:       ManagedByValue,
		LabelEnvironmentSlug: envSlug,
	}
}

// OwnershipAnnotations returns the ownership annotation for envName and
// GitLab's deploy board annotations. An empty projectPathSlug leaves
// AnnotationGitLabApp out.
func OwnershipAnnotations(envName, envSlug, projectPathSlug string) map[string]string {
	annotations := map[string]string{
		AnnotationEnvironment: envName,
		AnnotationGitLabEnv:   envSlug,
	}
	if projectPathSlug != "" {
		annotations[AnnotationGitLabApp] = projectPathSlug
	}
	return annotations
}

// RecordAnnotations returns the [VolatileAnnotations] for the job in ci,
// leaving out those the job does not define.
func RecordAnnotations(ci CIMetadata) map[string]string {
	annotations := make(map[string]string, len(VolatileAnnotations))
	for key, value := range map[string]string{
		AnnotationPipelineURL:     ci.PipelineURL,
		AnnotationJobURL:          ci.JobURL,
		AnnotationCommitSHA:       ci.CommitSHA,
		AnnotationMergeRequestIID: ci.MergeRequestIID,
	} {
		if value != "" {
			annotations[key] = value
		}
	}
	return annotations
}

// OwnedBy reports whether an object with these annotations and labels is
// managed by the provider for the environment envName. Objects created by
// hand, by Helm alone, or for another environment are not.
func OwnedBy(annotations, labels map[string]string, envName string) bool {
	return envName != "" &&
		labels[LabelManagedBy] == ManagedByValue &&
		annotations[AnnotationEnvironment] == envName
}

// ProjectEnvironmentGroup is the group the GitLab agent puts a CI job of the
// environment envSlug of project projectID in when it impersonates the job
// (ci_access with access_as ci_job): gitlab:project_env:<project id>:<slug>.
func ProjectEnvironmentGroup(projectID, envSlug string) string {
	return "gitlab:project_env:" + projectID + ":" + envSlug
}
