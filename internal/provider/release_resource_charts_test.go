package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

func (e *releaseTestEnv) fixtureRelease(name, fixture, body string) string {
	return fmt.Sprintf(`
resource "gitlabk8s_release" %q {
  name      = %q
  namespace = %q
  chart     = %q
%s
}
`, name, name, e.namespace, chartserver.FixtureChart(fixture), body)
}

// A chart that renders a random value is refused before anything reaches the cluster.
func TestAccRelease_nondeterministicChartIsRefused(t *testing.T) {
	e := testAccRelease(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: e.fixtureRelease("rnd", "random", ""),
				ExpectError: wrappedText("Chart Renders Differently Each Time", "Release "+e.namespace+"/rnd was not applied: ConfigMap/rnd-random rendered differently",
					"Nothing was changed in the cluster"),
			},
			{
				PreConfig: func() {
					if got := e.helmRevisions(t, "rnd"); len(got) != 0 {
						t.Errorf("the refused apply left a release: %v", got)
					}
					if _, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(context.Background(), "rnd-stable", metav1.GetOptions{}); err == nil {
						t.Errorf("the refused apply created ConfigMap rnd-stable")
					}
				},
				Config:   `# nothing`,
				PlanOnly: true,
			},
		},
	})
}

// A lookup that finds nothing at plan time but an object at apply time makes Helm render
// something else than the plan showed: the apply stops before writing.
func TestAccRelease_lookupThatFindsSomethingAtApplyIsRefused(t *testing.T) {
	e := testAccRelease(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// Nothing to find: plan and apply agree.
				Config: e.fixtureRelease("found", "lookup", ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gitlabk8s_release.found", tfjsonpathManifest("ConfigMap/found-state"), knownStringContaining(`origin: not found`)),
				},
			},
			{
				PreConfig: func() {
					_, err := e.kube.CoreV1().ConfigMaps(e.namespace).Create(context.Background(), &corev1.ConfigMap{
						ObjectMeta: metav1.ObjectMeta{Name: "other-state"}, Data: map[string]string{"origin": "cluster"},
					}, metav1.CreateOptions{})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: e.fixtureRelease("found", "lookup", "") + e.fixtureRelease("other", "lookup", ""),
				ExpectError: wrappedText("Chart Rendered Differently at Apply", "Release "+e.namespace+"/other was not applied",
					"ConfigMap/other-state rendered at apply differs from the plan (changed)", `-  origin: not found`, `+  origin: cluster`),
			},
			{
				PreConfig: func() {
					if got := e.helmRevisions(t, "other"); len(got) != 0 {
						t.Errorf("the refused apply left a release: %v", got)
					}
				},
				Config:   e.fixtureRelease("found", "lookup", ""),
				PlanOnly: true,
			},
		},
	})
}

// Hooks run and are part of the plan; CRDs in crds/ are installed as Helm installs them.
func TestAccRelease_hooksAndCRDs(t *testing.T) {
	e := testAccRelease(t)
	hooks := func(message string) string {
		return e.fixtureRelease("hooked", "with-hooks", fmt.Sprintf(`  set = { message = %q }`, message))
	}
	crds := e.fixtureRelease("widgets", "with-crds", "")
	hookRevision := func(want string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			cm, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(context.Background(), "hooked-installed", metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("the post-install hook did not run: %w", err)
			}
			if cm.Data["revision"] != want {
				return fmt.Errorf("post hook ConfigMap says revision %s, want %s", cm.Data["revision"], want)
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: hooks("ready") + crds,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue("gitlabk8s_release.hooked", tfjsonpathManifest("Job.batch/hooked-migrate"), knownStringContaining("helm.sh/hook: pre-install,pre-upgrade")),
					plancheck.ExpectKnownValue("gitlabk8s_release.widgets", tfjsonpathManifest("CustomResourceDefinition.apiextensions.k8s.io/widgets.test.gitlabk8s.io"), knownStringContaining("scope: Namespaced")),
					plancheck.ExpectKnownValue("gitlabk8s_release.widgets", tfjsonpathManifest("Widget.test.gitlabk8s.io/widgets"), knownStringContaining("size: 3")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gitlabk8s_release.hooked", tfjsonpathManifest("ConfigMap/hooked-config"), knownStringContaining("message: ready")),
				},
				Check: hookRevision("1"),
			},
			{
				Config:           hooks("ready") + crds,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: hooks("changed") + crds,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectManifestChanges("gitlabk8s_release.hooked", map[string]*manifestLines{
						"ConfigMap/hooked-config":    {removed: []string{"message: ready"}, added: []string{"message: changed"}},
						"Job.batch/hooked-migrate":   {removed: []string{"- \"1\""}, added: []string{"- \"2\""}},
						"ConfigMap/hooked-installed": {removed: []string{`revision: "1"`, `upgrade: "false"`}, added: []string{`revision: "2"`, `upgrade: "true"`}},
					}),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gitlabk8s_release.hooked", tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
				},
				Check: hookRevision("2"),
			},
			{
				Config:           hooks("changed") + crds,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			// Imported, a release has its hooks and CRDs in manifests as Helm recorded them, the
			// same as the state the applies left: the first plan after an import adds nothing.
			{
				Config:                  hooks("changed") + crds,
				ResourceName:            "gitlabk8s_release.hooked",
				ImportState:             true,
				ImportStateId:           e.namespace + "/hooked",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"chart", "set", "set_sensitive", "chart_digest", "timeout"},
			},
			{
				Config:                  hooks("changed") + crds,
				ResourceName:            "gitlabk8s_release.widgets",
				ImportState:             true,
				ImportStateId:           e.namespace + "/widgets",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"chart", "set", "set_sensitive", "chart_digest", "timeout"},
			},
		},
	})
}
