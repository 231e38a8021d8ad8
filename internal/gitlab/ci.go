package gitlab

// Names of the GitLab CI/CD predefined variables the provider reads.
const (
	EnvProjectID       = "CI_PROJECT_ID"
	EnvProjectPathSlug = "CI_PROJECT_PATH_SLUG"
	EnvEnvironmentName = "CI_ENVIRONMENT_NAME"
	EnvEnvironmentSlug = "CI_ENVIRONMENT_SLUG"
	EnvPipelineURL     = "CI_PIPELINE_URL"
	EnvJobURL          = "CI_JOB_URL"
	EnvCommitSHA       = "CI_COMMIT_SHA"
	EnvMergeRequestIID = "CI_MERGE_REQUEST_IID"
	EnvUserLogin       = "GITLAB_USER_LOGIN"
)

// CIVariables lists, in documentation order, every GitLab CI/CD predefined
// variable that [CIMetadataFromEnv] reads. Documentation lists the variables
// from this slice, so it and the function cannot drift apart.
var CIVariables = []string{
	EnvProjectID,       // numeric project ID, part of the default namespace
	EnvProjectPathSlug, // project path slug, part of the default namespace and the app.gitlab.com/app annotation
	EnvEnvironmentName, // environment name of the running job
	EnvEnvironmentSlug, // GitLab's slug for that environment, preferred over a computed one
	EnvPipelineURL,     // recorded in the gitlabk8s.io/pipeline-url annotation
	EnvJobURL,          // recorded in the gitlabk8s.io/job-url annotation
	EnvCommitSHA,       // recorded in the gitlabk8s.io/commit-sha annotation
	EnvMergeRequestIID, // recorded in the gitlabk8s.io/merge-request-iid annotation
	EnvUserLogin,       // the user a release revision is recorded for
}

// CIMetadata is what a GitLab CI job tells the provider about itself. Every
// field is empty outside a job (or when the job does not define it, as
// MergeRequestIID outside merge request pipelines).
type CIMetadata struct {
	ProjectID       string
	ProjectPathSlug string
	EnvironmentName string
	EnvironmentSlug string
	PipelineURL     string
	JobURL          string
	CommitSHA       string
	MergeRequestIID string
	UserLogin       string
}

// CIMetadataFromEnv reads the variables in [CIVariables] through getenv,
// usually os.Getenv. A nil getenv yields empty metadata.
func CIMetadataFromEnv(getenv func(string) string) CIMetadata {
	if getenv == nil {
		return CIMetadata{}
	}
	return CIMetadata{
		ProjectID:       getenv(EnvProjectID),
		ProjectPathSlug: getenv(EnvProjectPathSlug),
		EnvironmentName: getenv(EnvEnvironmentName),
		EnvironmentSlug: getenv(EnvEnvironmentSlug),
		PipelineURL:     getenv(EnvPipelineURL),
		JobURL:          getenv(EnvJobURL),
		CommitSHA:       getenv(EnvCommitSHA),
		MergeRequestIID: getenv(EnvMergeRequestIID),
		UserLogin:       getenv(EnvUserLogin),
	}
}
