package environment

import "github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"

var reviewJob = gitlab.CIMetadata{
	ProjectID:       "42",
	ProjectPathSlug: "group-app",
	EnvironmentName: "review/feature-x",
	EnvironmentSlug: "review-feat-abc123",
	PipelineURL:     "https://gitlab.example/group/app/-/pipelines/7",
	CommitSHA:       "0123456789abcdef",
}

func ptr[T any](v T) *T { return &v }

func kinds(objects []map[string]any) []any {
	out := make([]any, len(objects))
	for i, o := range objects {
		out[i] = o["kind"]
	}
	return out
}
