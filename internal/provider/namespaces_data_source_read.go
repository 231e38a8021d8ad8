package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlabapi"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
)

var _ namespaceLister = (*kube.Clients)(nil)

// This file reads what gitlabk8s_namespaces reports: GitLab's environments
// and the cluster's namespaces, and words their failures.

// gitlabCredentials resolves the API URL and the token, with where the token came from.
func (d *namespacesDataSource) gitlabCredentials(config namespacesModel) (url, token string, kind gitlabapi.TokenKind, from string) {
	url = valueOr(config.GitLabAPIURL, d.getenv(envGitLabAPIURL))
	switch {
	case valueOr(config.GitLabToken, "") != "":
		return url, config.GitLabToken.ValueString(), gitlabapi.AccessToken, "gitlab_token"
	case d.getenv(envGitLabToken) != "":
		return url, d.getenv(envGitLabToken), gitlabapi.AccessToken, "$" + envGitLabToken
	case d.getenv(envJobToken) != "":
		return url, d.getenv(envJobToken), gitlabapi.JobToken, "$" + envJobToken
	}
	return url, "", gitlabapi.AccessToken, ""
}

// readEnvironments asks GitLab for the project's environments. Without a URL
// and a token it returns nil environments (GitLab not asked) and a warning.
func (d *namespacesDataSource) readEnvironments(ctx context.Context, config namespacesModel, project gitlab.Project, diags *diag.Diagnostics) ([]gitlab.Environment, string, bool) {
	url, token, kind, from := d.gitlabCredentials(config)
	switch {
	case url == "" && token == "":
		diags.AddWarning("GitLab Not Asked", fmt.Sprintf(
			"No GitLab API URL and token are configured, so the data source cannot tell which environments are stopped or gone: every gitlab_state is "+
				"\"unknown\" and no namespace is stale. Set gitlab_api_url and gitlab_token (or $%s and $%s); inside GitLab CI, $%s and $%s are used.",
			envGitLabAPIURL, envGitLabToken, envGitLabAPIURL, envJobToken))
		return nil, "", true
	case url == "":
		diags.AddAttributeError(path.Root("gitlab_api_url"), "Missing GitLab API URL", fmt.Sprintf(
			"A GitLab token is configured (%s) but no API URL. Set gitlab_api_url to the API of your GitLab, e.g. https://gitlab.example.com/api/v4, "+
				"or run inside GitLab CI, where $%s holds it.", from, envGitLabAPIURL))
		return nil, "", false
	case token == "":
		diags.AddAttributeError(path.Root("gitlab_token"), "Missing GitLab Token", fmt.Sprintf(
			"The GitLab API URL %s is configured but no token to read the project's environments with. Set gitlab_token (or $%s) to an access token "+
				"with the read_api scope; inside GitLab CI, $%s is used.", url, envGitLabToken, envJobToken))
		return nil, url, false
	}
	userAgent := "terraform-provider-gitlabk8s"
	if d.data != nil {
		userAgent += "/" + d.data.version
	}
	client, err := d.environments(url, token, kind, userAgent)
	if err != nil {
		diags.AddAttributeError(path.Root("gitlab_api_url"), "Invalid GitLab API URL", capitalize(err.Error())+".")
		return nil, url, false
	}
	envs, err := client.ListEnvironments(ctx, project.ID)
	if err != nil {
		diags.Append(gitlabErrorDiagnostic(project.ID, url, from, err))
		return nil, url, false
	}
	tflog.Debug(ctx, "read the project's environments from GitLab", map[string]any{"project": project.ID, "environments": len(envs), "token_from": from})
	return envs, url, true
}

// gitlabErrorDiagnostic words a failed environments listing by GitLab's answer.
func gitlabErrorDiagnostic(project, url, from string, err error) diag.Diagnostic {
	const summary = "Unable to Read GitLab Environments"
	what := fmt.Sprintf("Listing the environments of project %s at %s with the token from %s failed, so no namespace was classified.", project, url, from)
	var status *gitlabapi.StatusError
	if !errors.As(err, &status) {
		return diag.NewErrorDiagnostic(summary, fmt.Sprintf("%s Check that GitLab is reachable from here, then run Terraform again.\n\n%v", what, err))
	}
	var todo string
	switch status.StatusCode {
	case http.StatusUnauthorized:
		todo = "GitLab rejected the token: it is wrong, expired or revoked. A job token ($" + envJobToken + ") works for this API from GitLab 16.2 on; " +
			"otherwise set gitlab_token to a project access token with the read_api scope."
	case http.StatusForbidden:
		todo = "The token may not read the project's environments: it needs the read_api scope and at least the Reporter role in the project."
	case http.StatusNotFound:
		todo = "GitLab knows no project " + project + " visible to this token. Check project_id (the numeric ID on the project's overview page) and the token's project."
	default:
		todo = "Run Terraform again; if it persists, check GitLab's status."
	}
	return diag.NewErrorDiagnostic(summary, fmt.Sprintf("%s %s\n\n%v", what, todo, err))
}

// listNamespaces reads every namespace of the cluster, as the pure matching takes them.
func listNamespaces(ctx context.Context, c namespaceLister, diags *diag.Diagnostics) ([]gitlab.NamespaceMeta, bool) {
	items, err := c.ListNamespaces(ctx)
	if err != nil {
		if f, ok := kube.AsForbidden(err); ok {
			identity := "the provider's identity"
			if user, werr := c.WhoAmI(ctx); werr == nil && user != "" {
				identity = fmt.Sprintf("%q", user)
			}
			diags.AddError("Unable to List Namespaces", fmt.Sprintf(
				"The identity %s may not list namespaces: RBAC refuses the verb \"list\" on the resource \"namespaces\" (core API group), a cluster-wide right. "+
					"Run the data source with an identity that has it (the janitor's, not a review app's deploy identity), or grant it, for example:\n"+
					"  kubectl create clusterrole gitlabk8s-list-namespaces --verb=list --resource=namespaces\n"+
					"  kubectl create clusterrolebinding gitlabk8s-list-namespaces --clusterrole=gitlabk8s-list-namespaces --user=%s\n\n%v",
				identity, trimQuotes(identity), f.Err))
			return nil, false
		}
		diags.AddError("Unable to List Namespaces", "Listing the cluster's namespaces failed. Check the connection, then run Terraform again.\n\n"+err.Error())
		return nil, false
	}
	metas := make([]gitlab.NamespaceMeta, len(items))
	for i, ns := range items {
		metas[i] = gitlab.NamespaceMeta{
			Name: ns.Name, UID: string(ns.UID), Labels: ns.Labels, Annotations: ns.Annotations,
			Created: ns.CreationTimestamp.Time, Terminating: ns.DeletionTimestamp != nil,
		}
	}
	return metas, true
}

func trimQuotes(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return "<identity>"
}
