package provider

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

// A merge-request pipeline plans without cluster credentials (a kubeconfig that is not there,
// kube_version set, no refresh) a release whose chart generates its passwords, lookup-or-
// generate: lookup finds nothing, so every rendering draws new passwords, and the values the
// last apply recorded in the private state take their place. The plan of the unchanged release
// is empty, and the plan of a change shows only the object using the changed value.
func TestAccRelease_offlinePlanKeepsGeneratedValues(t *testing.T) {
	e := testAccRelease(t)
	const address = "gitlabk8s_release.db"
	offline := missingKubeconfigProvider(t)
	release := func(message string) string {
		return releaseConfig("db", e.namespace, chartserver.FixtureChart("zoo-passwords"), fmt.Sprintf("  set = { message = %q }", message))
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		// Objects that exist are refreshed from the cluster, so such a pipeline plans with
		// -refresh=false.
		AdditionalCLIOptions: &resource.AdditionalCLIOptions{Plan: resource.PlanOptions{NoRefresh: true}},
		Steps: []resource.TestStep{
			{Config: release("hello")},
			{
				Config:   offline + release("hello"),
				PlanOnly: true,
			},
			{
				Config:             offline + release("changed"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
					expectManifestChanges(address, map[string]*manifestLines{
						"ConfigMap/db-config": {removed: []string{"message: hello"}, added: []string{"message: changed"}},
					}),
				}},
			},
			// Destroy runs with the last step's configuration, which reaches the cluster.
			{Config: release("hello"), PlanOnly: true},
		},
	})
}

// missingKubeconfigProvider is the provider block of a merge-request pipeline without cluster
// credentials: a kubeconfig that is not there, and kube_version set.
func missingKubeconfigProvider(t *testing.T) string {
	return fmt.Sprintf("provider \"gitlabk8s\" {\n  config_path  = %q\n  kube_version = %q\n}\n",
		filepath.Join(t.TempDir(), "deploy", "kubeconfig"), "v1.37.2")
}

// Offline, a plan takes drawn values from the private state and still follows their inputs:
// a setting beside a drawn key shows as its own line with the key kept, and a host that a
// certificate names leaves every Secret the CA signs unknown, to be drawn by the apply.
func TestAccRelease_offlinePlanFollowsDrawnInputs(t *testing.T) {
	e := testAccRelease(t)
	const address = "gitlabk8s_release.drw"
	offline := missingKubeconfigProvider(t)
	release := func(level, host string) string {
		return e.fixtureRelease("drw", "drawn", fmt.Sprintf(`  set = { level = %q, host = %q, "session.enabled" = false }`, level, host))
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		AdditionalCLIOptions:     &resource.AdditionalCLIOptions{Plan: resource.PlanOptions{NoRefresh: true}},
		Steps: []resource.TestStep{
			{Config: release("info", "a.example.test")},
			{Config: offline + release("info", "a.example.test"), PlanOnly: true},
			{
				Config:             offline + release("debug", "a.example.test"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
					expectManifestChanges(address, map[string]*manifestLines{
						"ConfigMap/drw-config": {removed: []string{"log_level = info"}, added: []string{"log_level = debug"}},
					}),
				}},
			},
			{
				Config:             offline + release("info", "b.example.test"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(address, tfjsonpathManifest("Secret/drw-tls")),
					plancheck.ExpectUnknownValue(address, tfjsonpathManifest("Secret/drw-metrics-tls")),
					plancheck.ExpectKnownValue(address, tfjsonpathManifest("ConfigMap/drw-config"), knownStringContaining("log_level = info")),
				}},
			},
			// Destroy runs with the last step's configuration, which reaches the cluster.
			{Config: release("info", "a.example.test"), PlanOnly: true},
		},
	})
}
