package provider

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
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
	"k8s.io/client-go/kubernetes"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// releaseTestEnv is one acceptance test's cluster and namespace.
type releaseTestEnv struct {
	cluster   *testcluster.Cluster
	kube      *kubernetes.Clientset
	namespace string
}

// testAccRelease starts (or reuses) the local cluster and creates a namespace for one test,
// deleted when the test ends.
func testAccRelease(t *testing.T) *releaseTestEnv {
	t.Helper()
	return testAccReleaseOn(t, testAccCluster(t))
}

// testAccReleaseOn creates a namespace for one test on cluster c, deleted when the test ends.
func testAccReleaseOn(t *testing.T, c *testcluster.Cluster) *releaseTestEnv {
	t.Helper()
	kc, err := c.Clientset(testcluster.AdminContext)
	if err != nil {
		t.Fatal(err)
	}
	suffix := strings.ToLower(strings.NewReplacer("_", "-", "/", "-").Replace(strings.TrimPrefix(t.Name(), "TestAccRelease_")))
	ns := fmt.Sprintf("rel-%s-%04x", strings.Trim(suffix[:min(20, len(suffix))], "-"), rand.IntN(1<<16))
	if _, err := kc.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
	t.Cleanup(func() {
		_ = kc.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	return &releaseTestEnv{cluster: c, kube: kc, namespace: ns}
}

// webRelease is a gitlabk8s_release "web" of the web fixture chart; body adds attributes.
func (e *releaseTestEnv) webRelease(body string) string {
	return e.fixtureRelease("web", "web", body)
}

const webAddress = "gitlabk8s_release.web"

// helmRevisions returns the revisions Helm stored for a release, as `helm history` reads them.
// onlyRevision checks that Helm's history of release name holds the one revision want, as
// helmRevisions writes it ("1:deployed").
func (e *releaseTestEnv) onlyRevision(t *testing.T, name, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if got := e.helmRevisions(t, name); len(got) != 1 || got[0] != want {
			return fmt.Errorf("helm history of %s = %v, want [%s]", name, got, want)
		}
		return nil
	}
}

func (e *releaseTestEnv) helmRevisions(t *testing.T, name string) []string {
	t.Helper()
	secrets, err := e.kube.CoreV1().Secrets(e.namespace).List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range secrets.Items {
		out = append(out, s.Labels["version"]+":"+s.Labels["status"])
	}
	return out
}

func TestAccRelease_lifecycle(t *testing.T) {
	e := testAccRelease(t)
	install := e.webRelease(`
  set = { "image.tag" = "1.25.0", "env.MODE" = "review" }
  set_sensitive = { secretValue = "s3cr3t-lifecycle" }
`)
	upgrade := strings.Replace(install, `"image.tag" = "1.25.0"`, `"image.tag" = "1.26.0"`, 1)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: install,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(webAddress, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(webAddress, tfjsonpath.New("manifests").AtMapKey("Deployment.apps/web"), knownvalue.StringRegexp(regexp.MustCompile(`image: registry.example/web:1.25.0`))),
					plancheck.ExpectKnownValue(webAddress, tfjsonpath.New("chart_version"), knownvalue.StringExact("1.0.0")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("id"), knownvalue.StringExact(e.namespace+"/web")),
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("status"), knownvalue.StringExact("deployed")),
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("app_version"), knownvalue.StringExact("1.25.0")),
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("chart_digest"), knownvalue.StringRegexp(regexp.MustCompile(`^sha256:[0-9a-f]{64}$`))),
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("manifests"), knownvalue.MapSizeExact(4)),
				},
				Check: func(*terraform.State) error {
					if got := e.helmRevisions(t, "web"); len(got) != 1 || got[0] != "1:deployed" {
						return fmt.Errorf("helm history = %v, want [1:deployed]", got)
					}
					return nil
				},
			},
			{
				// Refreshing the live objects and rendering again gives exactly the same manifests.
				Config:           install,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: upgrade,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(webAddress, plancheck.ResourceActionUpdate),
					expectManifestChanges(webAddress, map[string]*manifestLines{
						"Deployment.apps/web": {removed: []string{"image: registry.example/web:1.25.0"}, added: []string{"image: registry.example/web:1.26.0"}},
					}),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
				},
				Check: func(*terraform.State) error {
					d, err := e.kube.AppsV1().Deployments(e.namespace).Get(context.Background(), "web", metav1.GetOptions{})
					if err != nil {
						return err
					}
					if img := d.Spec.Template.Spec.Containers[0].Image; img != "registry.example/web:1.26.0" {
						return fmt.Errorf("deployment image = %s after the upgrade", img)
					}
					if d.Status.ReadyReplicas != 1 {
						return fmt.Errorf("deployment has %d ready replicas right after the apply; wait must wait", d.Status.ReadyReplicas)
					}
					return nil
				},
			},
			{
				// A settings-only change is recorded without a new revision.
				Config: strings.Replace(upgrade, `set = {`, "timeout = \"3m\"\n  set = {", 1),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
				},
			},
			{
				ResourceName:      webAddress,
				ImportState:       true,
				ImportStateId:     e.namespace + "/web",
				ImportStateVerify: true,
				// Helm keeps the merged values, not how they were given, and no chart location. An
				// imported release draws a key of its own, so its Secret's markers differ, and hides
				// what the chart derives from any value it was given (set image.tag and mode too).
				ImportStateVerifyIgnore: []string{"chart", "set", "set_sensitive", "chart_digest", "timeout", "manifests.Secret/web", "manifests.Deployment.apps/web"},
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if secret := states[0].Attributes["manifests.Secret/web"]; !strings.Contains(secret, "password: (sensitive value hmac:") {
						return fmt.Errorf("the imported Secret/web shows no keyed marker:\n%s", secret)
					}
					if d := states[0].Attributes["manifests.Deployment.apps/web"]; !strings.Contains(d, "image: (sensitive value hmac:") {
						return fmt.Errorf("the imported Deployment.apps/web shows the image tag given with set:\n%s", d)
					}
					return nil
				},
			},
		},
		CheckDestroy: func(*terraform.State) error {
			// Destroy waits until the release's objects are gone: none may be left the moment it
			// returns. What they owned goes as cascade says (TestAccRelease_destroyCascade).
			if _, err := e.kube.AppsV1().Deployments(e.namespace).Get(context.Background(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("deployment web still exists after destroy (err %v)", err)
			}
			if got := e.helmRevisions(t, "web"); len(got) != 0 {
				return fmt.Errorf("helm history after destroy = %v, want none", got)
			}
			return nil
		},
	})
}

// The restricted identity of a CI job (no cluster-wide rights beyond namespaces) can plan,
// install, refresh and uninstall a release.
func TestAccRelease_ciJobIdentity(t *testing.T) {
	e := testAccRelease(t)
	config := `provider "gitlabk8s" { config_context = "ci-job" }` + e.webRelease(`  set = { "image.tag" = "1.26.0" }`)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("status"), knownvalue.StringExact("deployed")),
				},
			},
			{
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// A release adopted with an import block: the first plan changes only settings Helm does not
// record (how values were given, the chart's location and digest), its apply runs no upgrade,
// and the plan after it is empty.
func TestAccRelease_importedReleaseIsNotUpgradedForNothing(t *testing.T) {
	e := testAccRelease(t)
	release := e.webRelease(`  set = { "image.tag" = "1.26.0" }`)
	forget := fmt.Sprintf(`
removed {
  from = %s
  lifecycle {
    destroy = false
  }
}
`, webAddress)
	adopt := release + fmt.Sprintf(`
import {
  to = %s
  id = "%s/web"
}
`, webAddress, e.namespace)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: release, Check: e.onlyRevision(t, "web", "1:deployed")},
			{
				// Terraform forgets the release; Helm and the cluster keep it.
				Config: forget,
				Check:  e.onlyRevision(t, "web", "1:deployed"),
			},
			{
				Config: adopt,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(webAddress, plancheck.ResourceActionUpdate),
					// Nothing in the cluster changes: the manifests are the ones Helm recorded.
					plancheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(1)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("chart_digest"), knownvalue.StringRegexp(regexp.MustCompile(`^sha256:[0-9a-f]{64}$`))),
				},
				Check: e.onlyRevision(t, "web", "1:deployed"),
			},
			{
				Config:           release,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}
