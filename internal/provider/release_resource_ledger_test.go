package provider

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
)

// helm history says who changed the release, from which pipeline, job, commit and merge
// request, and helm list --selector finds a user's or a merge request's releases. A configured
// description wins, and a later revision's labels replace the earlier ones, none left stale.
func TestAccRelease_helmHistoryIsTheLedger(t *testing.T) {
	e := testAccRelease(t)
	runHelm := e.helmCLI(t)
	listed := func(selector string) string {
		return strings.TrimSpace(runHelm("list", "--short", "--selector", selector))
	}
	description := func(revision int) string {
		var history []struct {
			Revision    int    `json:"revision"`
			Description string `json:"description"`
		}
		if err := json.Unmarshal([]byte(runHelm("history", "web", "--output", "json")), &history); err != nil {
			t.Fatal(err)
		}
		for _, h := range history {
			if h.Revision == revision {
				return h.Description
			}
		}
		t.Fatalf("helm history has no revision %d: %+v", revision, history)
		return ""
	}
	alice := gitlab.CIMetadata{
		PipelineURL: "https://gitlab.example.com/group/app/-/pipelines/4711", JobURL: "https://gitlab.example.com/group/app/-/jobs/815",
		CommitSHA: "0123456789abcdef0123456789abcdef01234567", MergeRequestIID: "17", UserLogin: "alice",
	}
	bob := gitlab.CIMetadata{
		PipelineURL: "https://gitlab.example.com/group/app/-/pipelines/4720", JobURL: "https://gitlab.example.com/group/app/-/jobs/900",
		CommitSHA: "89abcdef0123456789abcdef0123456789abcdef", UserLogin: "bob",
	}
	provider := func(ci gitlab.CIMetadata) string {
		return fmt.Sprintf(`
provider "gitlabk8s" {
  gitlab = {
    pipeline_url      = %q
    job_url           = %q
    commit_sha        = %q
    merge_request_iid = %q
    user_login        = %q
  }
}
`, ci.PipelineURL, ci.JobURL, ci.CommitSHA, ci.MergeRequestIID, ci.UserLogin)
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: provider(alice) + e.webRelease(`  set = { "image.tag" = "1.25.0" }`),
				Check: func(*terraform.State) error {
					if got, want := description(1), gitlab.LedgerDescription(alice); got != want {
						t.Errorf("revision 1's description = %q, want %q", got, want)
					}
					for _, selector := range []string{gitlab.ReleaseLabelUser + "=alice", gitlab.ReleaseLabelMergeRequestIID + "=17",
						gitlab.ReleaseLabelPipelineID + "=4711", gitlab.ReleaseLabelJobID + "=815", gitlab.ReleaseLabelCommitSHA + "=" + alice.CommitSHA} {
						if got := listed(selector); got != "web" {
							t.Errorf("helm list --selector %s = %q, want web", selector, got)
						}
					}
					return nil
				},
			},
			{
				// Bob's pipeline, outside a merge request, with a description of his own.
				Config: provider(bob) + e.webRelease(`
  set         = { "image.tag" = "1.26.0" }
  description = "Hotfix for the login page"
`),
				Check: func(*terraform.State) error {
					if got := description(2); got != "Hotfix for the login page" {
						t.Errorf("revision 2's description = %q, want the configured one", got)
					}
					if got := description(1); got != gitlab.LedgerDescription(alice) {
						t.Errorf("revision 1's description became %q", got)
					}
					if got := listed(gitlab.ReleaseLabelUser + "=bob"); got != "web" {
						t.Errorf("helm list --selector %s=bob = %q, want web", gitlab.ReleaseLabelUser, got)
					}
					for _, selector := range []string{gitlab.ReleaseLabelUser + "=alice", gitlab.ReleaseLabelMergeRequestIID} {
						if got := listed(selector); got != "" {
							t.Errorf("helm list --selector %s = %q, want nothing: the label is stale", selector, got)
						}
					}
					return nil
				},
			},
		},
	})
}
