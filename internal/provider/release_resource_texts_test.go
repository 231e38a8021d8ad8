package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// countedSince checks that one of the process's counts has grown by want since *since: the
// provider runs in the test's process, whose memory of written texts stands for a new
// process's once forgotten. what words the count ("wrote %d texts").
type countedSince struct {
	what  string
	count func() int64
	since *int64
	want  int64
}

// textsWritten checks the texts the refresh and the plan wrote since *since.
func textsWritten(since *int64, want int64) countedSince {
	return countedSince{"wrote %d texts", manifest.Written, since, want}
}

func (c countedSince) CheckPlan(_ context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	if got := c.count() - *c.since; got != c.want {
		resp.Error = fmt.Errorf("the refresh and the plan "+c.what+", want %d", got, c.want)
	}
}

// A refresh in a new process gives the release's unchanged objects the texts of the state, by
// the record the apply (or the refresh before) left in private, and writes only the object
// changed in the cluster; the plan then shows that change as before.
func TestAccRelease_aNewProcessWritesOnlyWhatChanged(t *testing.T) {
	e := testAccRelease(t)
	config := e.webRelease(`  set = { "env.MODE" = "review" }`)
	staging := e.webRelease(`  set = { "env.MODE" = "staging" }`)
	var since, sinceTaken int64
	newProcess := func() {
		manifest.ForgetWritten()
		since, sinceTaken = manifest.Written(), manifest.RecordsTaken()
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			// The install's plan had no key for the markers of the release's Secret yet, which
			// the apply drew: the refresh writes the Secret with it, the one text it writes.
			{RefreshState: true},
			{
				PreConfig: newProcess,
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(), textsWritten(&since, 0),
					// A plan after its own process's refresh does not take the record of texts again.
					countedSince{"took the record of texts %d times", manifest.RecordsTaken, &sinceTaken, 1},
				}},
			},
			{
				PreConfig: func() {
					newProcess()
					e.editDeployment(t, "registry.example/web:hacked", "debug")
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectManifestChanges(webAddress, map[string]*manifestLines{
						"Deployment.apps/web": {
							removed: []string{"value: debug", "image: registry.example/web:hacked"},
							added:   []string{"value: review", "image: registry.example/web:1.25.0"},
						},
					}),
					textsWritten(&since, 1),
				}},
				Check: e.checkDeployment("registry.example/web:1.25.0", 1),
			},
			{
				// A changed setting: the refresh takes every text, the plan writes the changed one.
				PreConfig: newProcess,
				Config:    staging,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectManifestChanges(webAddress, map[string]*manifestLines{
						"Deployment.apps/web": {removed: []string{"value: review"}, added: []string{"value: staging"}},
					}),
					textsWritten(&since, 1),
				}},
			},
			{
				// The apply recorded the texts it left in the state.
				PreConfig: newProcess,
				Config:    staging,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(), textsWritten(&since, 0),
				}},
			},
		},
	})
}
