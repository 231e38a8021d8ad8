package provider

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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

// helmBinary returns the helm 3 CLI to test with (helmCLIVersions[0]), skipping when there
// is none.
func helmBinary(t *testing.T) string {
	t.Helper()
	return helmCLIVersions[0].binary(t)
}

// helm4Binary returns the helm 4 CLI to test with (helmCLIVersions[1]), skipping when there
// is none.
func helm4Binary(t *testing.T) string {
	t.Helper()
	return helmCLIVersions[1].binary(t)
}

// helmCLIVersion is one major version of the helm CLI that must work on the provider's
// releases: the variable scripts/test.sh exports its build in, and the folder scripts/build-helm.sh
// builds it into.
type helmCLIVersion struct {
	name string
	env  string
	glob string
}

// helmCLIVersions are the helm CLIs tested against the provider's releases: helm 3 and helm 4
// write the same release records, and teams run either by hand.
var helmCLIVersions = []helmCLIVersion{
	{name: "helm3", env: "GITLABK8S_HELM", glob: "helm-v3.*"},
	{name: "helm4", env: "GITLABK8S_HELM4", glob: "helm-v4.*"},
}

// binary returns the CLI: $env, else the newest build of its major version in
// $GITLABK8S_BIN_DIR or the checkout's bin/. Skips, naming the variable, when there is none.
func (v helmCLIVersion) binary(t *testing.T) string {
	t.Helper()
	if path := os.Getenv(v.env); path != "" {
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("%s=%s: %v", v.env, path, err)
		}
		t.Logf("toolchain: helm=%s", path)
		return path
	}
	binDir := os.Getenv("GITLABK8S_BIN_DIR")
	if binDir == "" {
		_, file, _, _ := runtime.Caller(0)
		binDir = filepath.Join(filepath.Dir(file), "..", "..", "bin")
	}
	matches, _ := filepath.Glob(filepath.Join(binDir, v.glob, "helm"))
	if len(matches) == 0 {
		t.Skipf("no %s CLI: %s is unset and %s holds no %s/helm; scripts/test.sh builds it with scripts/build-helm.sh", v.name, v.env, binDir, v.glob)
	}
	t.Logf("toolchain: helm=%s", matches[len(matches)-1])
	return matches[len(matches)-1]
}

// forEachHelmCLI runs test once per helm CLI, as a subtest named after it, each with a
// namespace of its own and a function running that CLI in it.
func forEachHelmCLI(t *testing.T, test func(t *testing.T, e *releaseTestEnv, helm func(args ...string) string)) {
	for _, v := range helmCLIVersions {
		t.Run(v.name, func(t *testing.T) {
			binary := v.binary(t)
			e := testAccRelease(t)
			test(t, e, e.helmCLIOf(t, binary))
		})
	}
}
