package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

func (e *releaseTestEnv) fixtureRelease(name, fixture, body string) string {
	return e.chartRelease(name, chartserver.FixtureChart(fixture), body)
}

// chartRelease is a gitlabk8s_release called name of the chart in chartDir, in the test's
// namespace; body adds attributes.
func (e *releaseTestEnv) chartRelease(name, chartDir, body string) string {
	return releaseConfig(name, e.namespace, chartDir, body)
}

// releaseConfig is a gitlabk8s_release called name (its resource name too) of the chart in
// chartDir, in namespace; body adds attributes, one per line, indented by two spaces.
func releaseConfig(name, namespace, chartDir, body string) string {
	return fmt.Sprintf(`
resource "gitlabk8s_release" %q {
  name      = %q
  namespace = %q
  chart     = %q
%s
}
`, name, name, namespace, chartDir, body)
}

// ownCRDChart writes the with-crds chart with its Widget kind in an API group of this test's
// own, and returns its directory and the group. The cluster then does not serve the kind
// before the release installs its definition, whatever earlier runs left (Helm keeps CRDs on
// uninstall); the definition is deleted when the test ends.
func (e *releaseTestEnv) ownCRDChart(t *testing.T) (dir, group string) {
	t.Helper()
	group = e.namespace + ".test.gitlabk8s.io"
	fixture := chartserver.FixtureChart("with-crds")
	files := map[string]string{}
	for _, file := range []string{"Chart.yaml", "values.yaml", "crds/widgets.yaml", "templates/widget.yaml"} {
		data, err := os.ReadFile(filepath.Join(fixture, file))
		if err != nil {
			t.Fatal(err)
		}
		files[file] = strings.ReplaceAll(string(data), "test.gitlabk8s.io", group)
	}
	if _, err := e.kube.Discovery().ServerResourcesForGroupVersion(group + "/v1"); err == nil {
		t.Fatalf("the cluster already serves %s/v1, which this test's release must define", group)
	}
	crd := "widgets." + group
	t.Cleanup(func() {
		err := e.kube.RESTClient().Delete().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd).Do(context.Background()).Error()
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete CustomResourceDefinition %s: %v", crd, err)
		}
	})
	return writeChart(t, "with-crds", files), group
}

// A chart that generates a value at random installs: the plan leaves the object holding it
// unknown, the apply applies one draw and records it, and later plans keep it.
func TestAccRelease_generatedValueIsKept(t *testing.T) {
	e := testAccRelease(t)
	token := func() string {
		t.Helper()
		cm, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(context.Background(), "rnd-random", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cm.Data["token"]
	}
	var first string
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: e.fixtureRelease("rnd", "random", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue("gitlabk8s_release.rnd", tfjsonpathManifest("ConfigMap/rnd-random")),
					plancheck.ExpectKnownValue("gitlabk8s_release.rnd", tfjsonpathManifest("ConfigMap/rnd-stable"), knownStringContaining("same every time")),
				}},
				Check: func(s *terraform.State) error {
					first = token()
					recorded := s.RootModule().Resources["gitlabk8s_release.rnd"].Primary.Attributes["manifests.ConfigMap/rnd-random"]
					if first == "" || !strings.Contains(recorded, first) {
						return fmt.Errorf("the state records %q, the cluster holds token %q", recorded, first)
					}
					return nil
				},
			},
			{
				// Imported, the release renders with the token Helm recorded: nothing to change.
				Config:                  e.fixtureRelease("rnd", "random", ""),
				ResourceName:            "gitlabk8s_release.rnd",
				ImportState:             true,
				ImportStateId:           e.namespace + "/rnd",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"chart", "chart_digest", "timeout"},
			},
			{
				Config:           e.fixtureRelease("rnd", "random", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: func(*terraform.State) error {
					if got := token(); got != first {
						return fmt.Errorf("token changed from %q to %q", first, got)
					}
					return nil
				},
			},
		},
	})
}

// lookup is answered at plan time from the release's own namespace, as Helm's install answers
// it there, so the plan shows what the apply applies; other namespaces are not looked into.
func TestAccRelease_lookupIsAnsweredFromTheReleaseNamespace(t *testing.T) {
	e := testAccRelease(t)
	other := e.otherNamespace(t)
	for _, ns := range []string{e.namespace, other} {
		_, err := e.kube.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Data: map[string]string{"origin": "cluster"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: e.fixtureRelease("found", "lookup", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue("gitlabk8s_release.found", tfjsonpathManifest("ConfigMap/found-state"), knownStringContaining(`probe: cluster`)),
				}},
				// The next plan finds the release's own ConfigMap, which says what was applied: no change.
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gitlabk8s_release.found", tfjsonpathManifest("ConfigMap/found-state"), knownStringContaining(`origin: not found`)),
				},
			},
			{
				Config: e.fixtureRelease("found", "lookup", fmt.Sprintf(`  set = { probeNamespace = %q }`, other)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectManifestChanges("gitlabk8s_release.found", map[string]*manifestLines{
						"ConfigMap/found-state": {removed: []string{"probe: cluster"}, added: []string{"probe: not found"}},
					}),
				}},
			},
		},
	})
}

// Hooks run and are part of the plan; CRDs in crds/ are installed as Helm installs them. The
// plan does not dry-run a custom resource whose definition the same release installs: the
// cluster does not serve its kind yet (the group is this test's own), and the apply creates
// the definition first.
func TestAccRelease_hooksAndCRDs(t *testing.T) {
	e := testAccRelease(t)
	hooks := func(message string) string {
		return e.fixtureRelease("hooked", "with-hooks", fmt.Sprintf(`  set = { message = %q }`, message))
	}
	crdChart, group := e.ownCRDChart(t)
	crds := e.chartRelease("widgets", crdChart, "")
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
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: hooks("ready") + crds,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue("gitlabk8s_release.hooked", tfjsonpathManifest("Job.batch/hooked-migrate"), knownStringContaining("helm.sh/hook: pre-install,pre-upgrade")),
					plancheck.ExpectKnownValue("gitlabk8s_release.widgets", tfjsonpathManifest("CustomResourceDefinition.apiextensions.k8s.io/widgets."+group), knownStringContaining("scope: Namespaced")),
					plancheck.ExpectKnownValue("gitlabk8s_release.widgets", tfjsonpathManifest("Widget."+group+"/widgets"), knownStringContaining("size: 3")),
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
				Config:            hooks("changed") + crds,
				ResourceName:      "gitlabk8s_release.hooked",
				ImportState:       true,
				ImportStateId:     e.namespace + "/hooked",
				ImportStateVerify: true,
				// The message given with set is hidden: an import does not know it is not sensitive.
				ImportStateVerifyIgnore: []string{"chart", "set", "set_sensitive", "chart_digest", "timeout", "manifests.ConfigMap/hooked-config"},
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
