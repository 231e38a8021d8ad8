package environment

import (
	"strings"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
)

// The CI jobs' RoleBinding comes right after the Namespace, which carries the project ID so the
// documented admission policy can tell whose environment it is.
func TestBuild_ciJobAccessBindsTheEnvironmentsJobGroupFirst(t *testing.T) {
	env, problems := Build(Spec{Name: "review/feature-x", CIJobAccess: &CIJobAccessSpec{}}, reviewJob)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if len(env.Objects) < 2 || env.Objects[1]["kind"] != "RoleBinding" {
		t.Fatalf("objects %v: want the RoleBinding second", kinds(env.Objects))
	}
	binding := env.Objects[1]
	if name := binding["metadata"].(map[string]any)["name"]; name != CIJobRoleBindingName {
		t.Errorf("RoleBinding name %v, want %s", name, CIJobRoleBindingName)
	}
	roleRef := binding["roleRef"].(map[string]any)
	if roleRef["kind"] != "ClusterRole" || roleRef["name"] != DefaultCIJobClusterRole {
		t.Errorf("roleRef %v, want ClusterRole %s", roleRef, DefaultCIJobClusterRole)
	}
	subjects := binding["subjects"].([]any)
	want := gitlab.ProjectEnvironmentGroup(reviewJob.ProjectID, reviewJob.EnvironmentSlug)
	if len(subjects) != 1 || subjects[0].(map[string]any)["kind"] != "Group" || subjects[0].(map[string]any)["name"] != want {
		t.Errorf("subjects %v, want the group %s", subjects, want)
	}
	labels := env.Objects[0]["metadata"].(map[string]any)["labels"].(map[string]any)
	if labels[gitlab.LabelProjectID] != reviewJob.ProjectID || labels[gitlab.LabelEnvironmentSlug] != reviewJob.EnvironmentSlug {
		t.Errorf("namespace labels %v, want project ID %s and slug %s", labels, reviewJob.ProjectID, reviewJob.EnvironmentSlug)
	}

	// Without ci_job_access the namespace has no project label, as before.
	plain, _ := Build(Spec{Name: "review/feature-x"}, reviewJob)
	if _, ok := plain.Objects[0]["metadata"].(map[string]any)["labels"].(map[string]any)[gitlab.LabelProjectID]; ok {
		t.Error("a namespace without ci_job_access carries the project ID label")
	}
}

func TestBuild_ciJobAccessConfiguredRoleAndSubjects(t *testing.T) {
	spec := Spec{Name: "review/feature-x", CIJobAccess: &CIJobAccessSpec{
		ClusterRole: ptr("edit"),
		Subjects:    []Subject{{Kind: "User", Name: "alice"}, {Kind: "ServiceAccount", Name: "ci"}},
	}}
	env, problems := Build(spec, gitlab.CIMetadata{})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	binding := env.Objects[1]
	if name := binding["roleRef"].(map[string]any)["name"]; name != "edit" {
		t.Errorf("roleRef name %v, want edit", name)
	}
	subjects := binding["subjects"].([]any)
	sa := subjects[1].(map[string]any)
	if len(subjects) != 2 || subjects[0].(map[string]any)["apiGroup"] != rbacGroup || sa["namespace"] != env.Namespace || sa["apiGroup"] != nil {
		t.Errorf("subjects %v: want User alice with the RBAC API group, then ServiceAccount ci in %s", subjects, env.Namespace)
	}
}

func TestBuild_ciJobAccessProblems(t *testing.T) {
	tests := []struct {
		name   string
		access CIJobAccessSpec
		ci     gitlab.CIMetadata
		path   string
		detail string
	}{
		{"no project ID", CIJobAccessSpec{}, gitlab.CIMetadata{}, "ci_job_access", "project_id"},
		{"empty role", CIJobAccessSpec{ClusterRole: ptr(" ")}, reviewJob, "ci_job_access.cluster_role", "must not be empty"},
		{"no subjects", CIJobAccessSpec{Subjects: []Subject{}}, reviewJob, "ci_job_access.subjects", "leave it unset"},
		{"unknown kind", CIJobAccessSpec{Subjects: []Subject{{Kind: "Team", Name: "x"}}}, reviewJob, "ci_job_access.subjects[0].kind", "Group, User, ServiceAccount"},
		{"no name", CIJobAccessSpec{Subjects: []Subject{{Kind: "Group"}}}, reviewJob, "ci_job_access.subjects[0].name", "must not be empty"},
		{"namespace of a group", CIJobAccessSpec{Subjects: []Subject{{Kind: "Group", Name: "g", Namespace: "x"}}}, reviewJob, "ci_job_access.subjects[0].namespace", "Only a ServiceAccount"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			access := tt.access
			_, problems := Build(Spec{Name: "review/feature-x", CIJobAccess: &access}, tt.ci)
			if len(problems) != 1 || problems[0].Path.String() != tt.path || !strings.Contains(problems[0].Detail, tt.detail) {
				t.Errorf("problems %v, want one at %s saying %q", problems, tt.path, tt.detail)
			}
		})
	}
}
