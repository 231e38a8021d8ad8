package gitlab

import (
	"maps"
	"testing"
)

func TestOwnedBy_needsManagedByLabelAndEnvironmentAnnotation(t *testing.T) {
	const env = "review/feature"
	ours := OwnershipLabels(EnvironmentSlug(env))
	ourAnnotations := OwnershipAnnotations(env, EnvironmentSlug(env), "group-app")
	tests := []struct {
		desc        string
		annotations map[string]string
		labels      map[string]string
		envName     string
		want        bool
	}{
		{"written by us", ourAnnotations, ours, env, true},
		{"other environment", ourAnnotations, ours, "production", false},
		{"managed by helm", ourAnnotations, map[string]string{LabelManagedBy: "Helm"}, env, false},
		{"no annotation", nil, ours, env, false},
		{"no labels", ourAnnotations, nil, env, false},
		{"empty environment name never owns", map[string]string{AnnotationEnvironment: ""}, ours, "", false},
		{"slug label alone is not ownership", map[string]string{}, map[string]string{LabelEnvironmentSlug: "review-feature"}, env, false},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := OwnedBy(tt.annotations, tt.labels, tt.envName); got != tt.want {
				t.Errorf("OwnedBy = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOwnershipAnnotations_includeGitLabsDeployBoardAnnotations(t *testing.T) {
	tests := []struct {
		desc                   string
		name, slug, projectApp string
		want                   map[string]string
	}{
		{"with project", "review/x", "review-x-abc123", "group-app", map[string]string{
			AnnotationEnvironment: "review/x", AnnotationGitLabEnv: "review-x-abc123", AnnotationGitLabApp: "group-app",
		}},
		{"without project", "production", "production", "", map[string]string{
			AnnotationEnvironment: "production", AnnotationGitLabEnv: "production",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := OwnershipAnnotations(tt.name, tt.slug, tt.projectApp); !maps.Equal(got, tt.want) {
				t.Errorf("OwnershipAnnotations = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRecordAnnotations_areAllVolatile(t *testing.T) {
	tests := []struct {
		desc string
		ci   CIMetadata
		want map[string]string
	}{
		{"full job", CIMetadata{PipelineURL: "https://gitlab.example/p/1", JobURL: "https://gitlab.example/j/2", CommitSHA: "abc", MergeRequestIID: "7"}, map[string]string{
			AnnotationPipelineURL: "https://gitlab.example/p/1", AnnotationJobURL: "https://gitlab.example/j/2", AnnotationCommitSHA: "abc", AnnotationMergeRequestIID: "7",
		}},
		{"branch pipeline", CIMetadata{CommitSHA: "abc"}, map[string]string{AnnotationCommitSHA: "abc"}},
		{"outside CI", CIMetadata{}, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got := RecordAnnotations(tt.ci)
			if !maps.Equal(got, tt.want) {
				t.Errorf("RecordAnnotations = %v, want %v", got, tt.want)
			}
			for key := range got {
				if !IsVolatileAnnotation(key) {
					t.Errorf("record annotation %s is not in VolatileAnnotations", key)
				}
			}
		})
	}
	for _, stable := range []string{AnnotationEnvironment, AnnotationGitLabEnv, AnnotationGitLabApp} {
		if IsVolatileAnnotation(stable) {
			t.Errorf("%s must not be volatile: it identifies the environment", stable)
		}
	}
}
