package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
)

// ci is the GitLab CI job the provider runs in, as the provider was configured.
func (r *releaseResource) ci() gitlab.CIMetadata {
	return r.data.ci
}

// revisionDescription is what `helm history` shows for the revision an apply writes: the
// configured description, else who applied it from which pipeline, job, commit and merge request.
func revisionDescription(configured types.String, ci gitlab.CIMetadata) string {
	if configured.ValueString() != "" {
		return configured.ValueString()
	}
	return gitlab.LedgerDescription(ci)
}
