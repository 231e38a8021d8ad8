package testcluster

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// CIJob is a GitLab CI job as the GitLab agent impersonates it for ci_access with
// access_as: {ci_job: {}}.
type CIJob struct {
	ID, ProjectID string
	// GroupIDs are the project's parent groups, outermost first.
	GroupIDs []string
	// EnvironmentSlug and Tier describe the job's environment; a job without one has neither.
	EnvironmentSlug, Tier string
}

// User is the user name the agent impersonates: gitlab:ci_job:<job id>.
func (j CIJob) User() string { return "gitlab:ci_job:" + j.ID }

// Groups are the groups the agent impersonates, in the agent's order.
func (j CIJob) Groups() []string {
	groups := []string{"gitlab:ci_job"}
	for _, id := range j.GroupIDs {
		groups = append(groups, "gitlab:group:"+id)
		if j.Tier != "" {
			groups = append(groups, "gitlab:group_env_tier:"+id+":"+j.Tier)
		}
	}
	groups = append(groups, "gitlab:project:"+j.ProjectID)
	if j.EnvironmentSlug != "" {
		groups = append(groups, "gitlab:project_env:"+j.ProjectID+":"+j.EnvironmentSlug,
			"gitlab:project_env_tier:"+j.ProjectID+":"+j.Tier)
	}
	return groups
}

// CIJobKubeconfig writes dir/kubeconfig-<job id> with one context, "ci-job" (current), that
// authenticates as the agent's stand-in and impersonates job, as the ci-job context does for
// [CIJobContextJob]. It returns the file's path.
func (c *Cluster) CIJobKubeconfig(dir string, job CIJob) (string, error) {
	base, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", c.Kubeconfig, err)
	}
	admin, ok := base.Contexts[AdminContext]
	if !ok || base.Clusters[admin.Cluster] == nil {
		return "", fmt.Errorf("%s has no context %s with a cluster", c.Kubeconfig, AdminContext)
	}
	config := clientcmdapi.NewConfig()
	config.Clusters[admin.Cluster] = base.Clusters[admin.Cluster]
	config.AuthInfos[CIJobContext] = &clientcmdapi.AuthInfo{
		Token:             c.AgentToken,
		Impersonate:       job.User(),
		ImpersonateGroups: job.Groups(),
	}
	config.Contexts[CIJobContext] = &clientcmdapi.Context{Cluster: admin.Cluster, AuthInfo: CIJobContext, Namespace: "default"}
	config.CurrentContext = CIJobContext
	path := filepath.Join(dir, "kubeconfig-"+job.ID)
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}
