package gitlab

import (
	"reflect"
	"testing"
)

func TestCIMetadataFromEnv_readsEveryDocumentedVariable(t *testing.T) {
	// Each variable's value is its own name, so a field read from the wrong
	// variable shows up.
	got := CIMetadataFromEnv(func(name string) string { return name })
	want := CIMetadata{
		ProjectID:       "CI_PROJECT_ID",
		ProjectPathSlug: "CI_PROJECT_PATH_SLUG",
		EnvironmentName: "CI_ENVIRONMENT_NAME",
		EnvironmentSlug: "CI_ENVIRONMENT_SLUG",
		PipelineURL:     "CI_PIPELINE_URL",
		JobURL:          "CI_JOB_URL",
		CommitSHA:       "CI_COMMIT_SHA",
		MergeRequestIID: "CI_MERGE_REQUEST_IID",
		UserLogin:       "GITLAB_USER_LOGIN",
	}
	if got != want {
		t.Errorf("CIMetadataFromEnv = %+v, want %+v", got, want)
	}

	// Every documented variable fills a field, and every field is documented.
	fields := reflect.ValueOf(got)
	read := map[string]bool{}
	for i := range fields.NumField() {
		read[fields.Field(i).String()] = true
	}
	for _, name := range CIVariables {
		if !read[name] {
			t.Errorf("CIVariables lists %s, but CIMetadataFromEnv does not read it", name)
		}
	}
	if len(CIVariables) != fields.NumField() {
		t.Errorf("CIVariables has %d names, CIMetadata has %d fields", len(CIVariables), fields.NumField())
	}
}

func TestCIMetadataFromEnv_emptyOutsideCI(t *testing.T) {
	tests := []struct {
		desc   string
		getenv func(string) string
	}{
		{"nil getenv", nil},
		{"empty environment", func(string) string { return "" }},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := CIMetadataFromEnv(tt.getenv); got != (CIMetadata{}) {
				t.Errorf("CIMetadataFromEnv = %+v, want empty", got)
			}
		})
	}
}
