package environment

import (
	"slices"
	"strings"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// Names and defaults of the RoleBinding that lets the environment's own CI
// jobs into its namespace.
const (
	// CIJobRoleBindingName names the RoleBinding made from ci_job_access.
	CIJobRoleBindingName = "gitlabk8s-ci-job"
	// DefaultCIJobClusterRole is the ClusterRole the RoleBinding grants by
	// default, the one the documented cluster setup defines.
	DefaultCIJobClusterRole = "gitlabk8s:environment-ci-job"
)

// Subject kinds a RoleBinding can name.
var SubjectKinds = []string{"Group", "User", "ServiceAccount"}

// CIJobAccessSpec configures the RoleBinding that grants the environment's
// CI jobs, as the GitLab agent impersonates them, a ClusterRole in the
// namespace.
type CIJobAccessSpec struct {
	// ClusterRole is nil for [DefaultCIJobClusterRole].
	ClusterRole *string
	// Subjects are nil for the environment's own job group,
	// gitlab:project_env:<project id>:<slug>.
	Subjects []Subject
}

// Subject is one subject of a RoleBinding. Namespace is for ServiceAccounts
// only; "" means the environment's namespace.
type Subject struct {
	Kind, Name, Namespace string
}

// CIJobClusterRole is the ClusterRole the CI jobs are bound to.
func (c CIJobAccessSpec) CIJobClusterRole() string {
	if c.ClusterRole == nil {
		return DefaultCIJobClusterRole
	}
	return *c.ClusterRole
}

// ValidateCIJobAccess checks ci_job_access: a ClusterRole name and subjects
// of a known kind with a name.
func ValidateCIJobAccess(c *CIJobAccessSpec) Problems {
	if c == nil {
		return nil
	}
	var ps Problems
	base := Attr("ci_job_access")
	if c.ClusterRole != nil && strings.TrimSpace(*c.ClusterRole) == "" {
		ps.add(base.Attr("cluster_role"), "The ClusterRole name must not be empty; leave cluster_role unset for %s.", DefaultCIJobClusterRole)
	}
	if c.Subjects != nil && len(c.Subjects) == 0 {
		ps.add(base.Attr("subjects"), "subjects must not be empty; leave it unset to bind the environment's own CI jobs (the group gitlab:project_env:<project id>:<slug>).")
	}
	for i, s := range c.Subjects {
		p := base.Attr("subjects").Index(i)
		if !slices.Contains(SubjectKinds, s.Kind) {
			ps.add(p.Attr("kind"), "Subject kind %q is not one of %s.", s.Kind, strings.Join(SubjectKinds, ", "))
		}
		if s.Name == "" {
			ps.add(p.Attr("name"), "The subject's name must not be empty.")
		}
		if s.Namespace != "" && s.Kind != "ServiceAccount" {
			ps.add(p.Attr("namespace"), "Only a ServiceAccount subject has a namespace; remove it from the %s %q.", s.Kind, s.Name)
		}
	}
	return ps
}

// ciJobSubjects are the RoleBinding's subjects: the configured ones, or the
// environment's job group, which needs the GitLab project ID.
func (b builder) ciJobSubjects() ([]any, Problems) {
	access := b.spec.CIJobAccess
	if access.Subjects == nil {
		if b.ci.ProjectID == "" {
			return nil, Problems{{Path: Attr("ci_job_access"), Detail: "Binding the environment's CI jobs needs the GitLab project ID, " +
				"which CI jobs have in CI_PROJECT_ID. Outside CI set project_id in the provider's gitlab block, or set ci_job_access.subjects."}}
		}
		return []any{subjectObject(Subject{Kind: "Group", Name: gitlab.ProjectEnvironmentGroup(b.ci.ProjectID, b.slug)}, b.namespace)}, nil
	}
	out := make([]any, len(access.Subjects))
	for i, s := range access.Subjects {
		out[i] = subjectObject(s, b.namespace)
	}
	return out, nil
}

func subjectObject(s Subject, namespace string) map[string]any {
	if s.Kind == "ServiceAccount" {
		if s.Namespace == "" {
			s.Namespace = namespace
		}
		return map[string]any{"kind": s.Kind, "name": s.Name, "namespace": s.Namespace}
	}
	return map[string]any{"apiGroup": rbacGroup, "kind": s.Kind, "name": s.Name}
}

// ciJobRoleBinding binds the CI jobs in the namespace. It comes right after
// the Namespace: the jobs hold no rights in a new namespace before it exists.
func (b builder) ciJobRoleBinding() (manifest.Object, Problems) {
	subjects, ps := b.ciJobSubjects()
	if len(ps) > 0 {
		return nil, ps
	}
	return manifest.Object{
		"apiVersion": rbacAPIVersion,
		"kind":       "RoleBinding",
		"metadata":   b.metadata(CIJobRoleBindingName),
		"roleRef":    map[string]any{"apiGroup": rbacGroup, "kind": "ClusterRole", "name": b.spec.CIJobAccess.CIJobClusterRole()},
		"subjects":   subjects,
	}, nil
}

// ciJobNamespaceLabels are the labels by which the documented admission
// policy recognises the namespace as the environment's: its project ID and
// slug, which together name the environment's job group.
func (b builder) ciJobNamespaceLabels() map[string]string {
	if b.spec.CIJobAccess == nil || b.ci.ProjectID == "" {
		return nil
	}
	return map[string]string{gitlab.LabelProjectID: b.ci.ProjectID}
}
