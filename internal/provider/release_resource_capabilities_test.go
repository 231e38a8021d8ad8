package provider

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

// writeCapabilitiesChart writes a chart whose ConfigMap shows what .Capabilities holds.
func writeCapabilitiesChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "caps")
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: caps\nversion: 0.1.0\n",
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}
  hasWidgets: {{ .Capabilities.APIVersions.Has "test.gitlabk8s.io/v1" | quote }}
  hasDeployments: {{ .Capabilities.APIVersions.Has "apps/v1/Deployment" | quote }}
`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func capsRelease(namespace, chartDir string) string {
	return releaseConfig("caps", namespace, chartDir, "")
}

// A merge-request pipeline plans without any cluster credentials: with kube_version pinned,
// .Capabilities comes from the provider configuration and every object shows.
func TestAccRelease_planWithoutClusterCredentials(t *testing.T) {
	testAccCluster(t)
	t.Setenv("KUBECONFIG", "")
	chartDir := writeCapabilitiesChart(t)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: `
provider "gitlabk8s" {
  kube_version = "v1.30.4"
  api_versions = ["test.gitlabk8s.io/v1"]
}
` + capsRelease("review-offline", chartDir),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue("gitlabk8s_release.caps", tfjsonpathManifest("ConfigMap/caps"), knownStringContaining(`kubeVersion: v1.30.4`)),
					plancheck.ExpectKnownValue("gitlabk8s_release.caps", tfjsonpathManifest("ConfigMap/caps"), knownStringContaining(`hasWidgets: "true"`)),
				}},
			},
			{
				// No kube_version and no cluster: Helm's defaults, with a warning, still a full plan.
				Config:             `provider "gitlabk8s" {}` + capsRelease("review-offline", chartDir),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue("gitlabk8s_release.caps", tfjsonpathManifest("ConfigMap/caps"), knownStringContaining(`hasWidgets: "false"`)),
				}},
			},
		},
	})
}

// With a reachable cluster and no kube_version, .Capabilities is the cluster's.
func TestAccRelease_capabilitiesFromTheCluster(t *testing.T) {
	e := testAccRelease(t)
	chartDir := writeCapabilitiesChart(t)
	version, err := e.kube.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	// Another test may have installed the widgets CRD; what counts is what the cluster serves.
	_, err = e.kube.Discovery().ServerResourcesForGroupVersion("test.gitlabk8s.io/v1")
	servesWidgets := err == nil
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: capsRelease(e.namespace, chartDir),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue("gitlabk8s_release.caps", tfjsonpathManifest("ConfigMap/caps"), knownStringContaining(`kubeVersion: `+version.GitVersion)),
				plancheck.ExpectKnownValue("gitlabk8s_release.caps", tfjsonpathManifest("ConfigMap/caps"), knownStringContaining(`hasDeployments: "true"`)),
				plancheck.ExpectKnownValue("gitlabk8s_release.caps", tfjsonpathManifest("ConfigMap/caps"), knownStringContaining(fmt.Sprintf(`hasWidgets: "%t"`, servesWidgets))),
			}},
		}},
	})
}

// An input unknown until apply leaves manifests unknown for that plan only; the apply renders
// and applies once it is known.
func TestAccRelease_unknownInputLeavesManifestsUnknown(t *testing.T) {
	e := testAccRelease(t)
	config := fmt.Sprintf(`
resource "terraform_data" "tag" {
  input = "1.26.0"
}

resource "gitlabk8s_release" "web" {
  name      = "web"
  namespace = %q
  chart     = %q
  set       = { "image.tag" = terraform_data.tag.output }
}
`, e.namespace, chartserver.FixtureChart("web"))
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(webAddress, tfjsonpath.New("manifests")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpathManifest("Deployment.apps/web"), knownStringContaining("image: registry.example/web:1.26.0")),
				},
			},
			{
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// helmCLI returns a function that runs the helm 3 CLI (helmBinary) in the test's namespace, as
// admin, and returns its output; a failing command fails the test.
func (e *releaseTestEnv) helmCLI(t *testing.T) func(args ...string) string {
	t.Helper()
	return e.helmCLIOf(t, helmBinary(t))
}

// helmCLIOf is helmCLI with the helm binary at helm.
func (e *releaseTestEnv) helmCLIOf(t *testing.T, helm string) func(args ...string) string {
	t.Helper()
	return func(args ...string) string {
		t.Helper()
		out, err := e.runHelm(t, helm, args...)
		if err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
}

// runHelm runs the helm binary at helm in the test's namespace, as admin, and returns its
// output and how it ended.
func (e *releaseTestEnv) runHelm(t *testing.T, helm string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helm, append(args, "--namespace", e.namespace, "--kubeconfig", e.cluster.Kubeconfig)...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}
