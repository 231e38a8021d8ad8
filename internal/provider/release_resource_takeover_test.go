package provider

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

// takingOver is the web release's configuration with take_ownership set as given.
func (e *releaseTestEnv) takingOver(takeOwnership bool, greeting string) string {
	return e.webRelease(fmt.Sprintf("  take_ownership = %t\n  set = { \"config.greeting\" = %q }", takeOwnership, greeting))
}

// configMapGreeting checks that the live ConfigMap web holds greeting and belongs to the
// release web, as Helm's ownership annotations say.
func (e *releaseTestEnv) configMapGreeting(greeting string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		cm, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := cm.Data["greeting"]; got != greeting {
			return fmt.Errorf("ConfigMap web: greeting = %q, want %q", got, greeting)
		}
		if owner := cm.Annotations["meta.helm.sh/release-name"]; owner != "web" {
			return fmt.Errorf("ConfigMap web belongs to release %q, want web", owner)
		}
		return nil
	}
}

// nothingLeft checks that the destroy left no revision of release web and no ConfigMap web.
func (e *releaseTestEnv) nothingLeft(t *testing.T) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if revisions := e.helmRevisions(t, "web"); len(revisions) > 0 {
			return fmt.Errorf("after the destroy, Helm still stores revisions %v of release web", revisions)
		}
		_, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(context.Background(), "web", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("after the destroy, ConfigMap web: %v, want not found", err)
		}
		return nil
	}
}

// A release installed with the helm CLI and not in the state: without take_ownership the plan
// fails on the attribute, naming the import command; with it, the apply upgrades the deployed
// revision 1 to 2 with the configuration's values, the replan is empty, and the destroy
// uninstalls it.
func TestAccRelease_takeOverAHelmInstalledRelease(t *testing.T) {
	e := testAccRelease(t)
	e.helmCLIOf(t, helm4Binary(t))("install", "web", chartserver.FixtureChart("web"), "--wait", "--set", "config.greeting=from-cli")
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             e.nothingLeft(t),
		Steps: []resource.TestStep{
			{
				Config:      e.takingOver(false, "from-terraform"),
				ExpectError: wrappedText("Release Already Exists", "revision 1", "terraform import <address> "+e.namespace+"/web", "take_ownership = true"),
			},
			{
				Config: e.takingOver(true, "from-terraform"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(webAddress, plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					e.configMapGreeting("from-terraform"),
					func(*terraform.State) error {
						if got := fmt.Sprint(e.helmRevisions(t, "web")); got != "[1:superseded 2:deployed]" {
							return fmt.Errorf("Helm's revisions of web = %s, want the CLI's 1 superseded by the provider's 2", got)
						}
						return nil
					},
				),
			},
			{
				Config:           e.takingOver(true, "from-terraform"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// kubectlApply applies manifest in the test's namespace with the kubectl CLI, as a user would.
func (e *releaseTestEnv) kubectlApply(t *testing.T, manifest string) {
	t.Helper()
	c := testAccCluster(t)
	file := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(c.KubectlPath, "--kubeconfig", c.Kubeconfig, "--context", c.AdminContext, "--namespace", e.namespace, "apply", "-f", file)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
}

// notApplied checks that nothing was applied over the ConfigMap web that kubectl created: it
// still holds greeting from-kubectl, no Helm release owns it, and Helm stores no revision of web.
func (e *releaseTestEnv) notApplied(t *testing.T) {
	t.Helper()
	cm, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["greeting"] != "from-kubectl" || cm.Annotations["meta.helm.sh/release-name"] != "" {
		t.Errorf("after the refused plan, ConfigMap web holds %v with annotations %v; want kubectl's, untouched", cm.Data, cm.Annotations)
	}
	if revisions := e.helmRevisions(t, "web"); len(revisions) > 0 {
		t.Errorf("after the refused plan, Helm stores revisions %v of release web, want none", revisions)
	}
}

// Objects created with kubectl apply (no Helm ownership metadata) make the plan fail without
// take_ownership, naming the object and the attribute, so no apply is attempted; with it they
// are adopted, as Helm's --take-ownership does: they get the release's annotations and the
// chart's content, a field the chart does not set stays, the replan is empty, and the destroy
// deletes them.
func TestAccRelease_takeOwnershipAdoptsObjectsWithoutOwner(t *testing.T) {
	e := testAccRelease(t)
	e.kubectlApply(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  greeting: from-kubectl\n  extra: x\n")
	refused := wrappedText("Object Already Exists", "ConfigMap web exists in the cluster and no Helm release owns it", "Set take_ownership = true")
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             e.nothingLeft(t),
		Steps: []resource.TestStep{
			{
				Config:      e.takingOver(false, "from-terraform"),
				PlanOnly:    true,
				ExpectError: refused,
			},
			{
				// terraform apply plans first: the plan's refusal is all it does.
				Config:      e.takingOver(false, "from-terraform"),
				ExpectError: refused,
			},
			{
				PreConfig:         func() { e.notApplied(t) },
				Config:            e.takingOver(true, "from-terraform"),
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(1))},
				Check: resource.ComposeAggregateTestCheckFunc(e.configMapGreeting("from-terraform"), func(*terraform.State) error {
					cm, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(context.Background(), "web", metav1.GetOptions{})
					if err != nil {
						return err
					}
					if cm.Data["extra"] != "x" {
						return fmt.Errorf("ConfigMap web lost the field kubectl set and the chart does not: %v", cm.Data)
					}
					return nil
				}),
			},
			{
				Config:           e.takingOver(true, "from-terraform"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// An upgrade that adds to the chart an object that exists without an owner is refused at plan
// time, naming it, and the release stays at its revision; with take_ownership the upgrade
// adopts it.
func TestAccRelease_takeOwnershipNeededForANewObjectWithoutOwner(t *testing.T) {
	e := testAccRelease(t)
	withIngress := func(takeOwnership bool) string {
		return e.webRelease(fmt.Sprintf("  take_ownership = %t\n  set = { \"config.greeting\" = \"from-terraform\", \"ingress.enabled\" = \"true\" }", takeOwnership))
	}
	ingressOwner := func() string {
		ing, err := e.kube.NetworkingV1().Ingresses(e.namespace).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return ing.Annotations["meta.helm.sh/release-name"]
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: e.takingOver(false, "from-terraform"),
				Check:  e.onlyRevision(t, "web", "1:deployed"),
			},
			{
				PreConfig: func() {
					e.kubectlApply(t, "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web\nspec:\n  rules:\n    - host: other.example.test\n"+
						"      http:\n        paths:\n          - path: /\n            pathType: Prefix\n            backend:\n              service:\n"+
						"                name: web\n                port:\n                  name: http\n")
				},
				Config:      withIngress(false),
				ExpectError: wrappedText("Object Already Exists", "Ingress web exists in the cluster and no Helm release owns it", "Set take_ownership = true"),
			},
			{
				PreConfig: func() {
					if got := fmt.Sprint(e.helmRevisions(t, "web")); got != "[1:deployed]" || ingressOwner() != "" {
						t.Errorf("after the refused plan, Helm's revisions of web = %s and Ingress web belongs to %q; want [1:deployed] and no owner", got, ingressOwner())
					}
				},
				Config: withIngress(true),
				Check: func(*terraform.State) error {
					if owner := ingressOwner(); owner != "web" {
						return fmt.Errorf("Ingress web belongs to release %q, want web", owner)
					}
					return nil
				},
			},
			{
				Config:           withIngress(true),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// An object that belongs to another Helm release is refused at plan time, naming that
// release. Once that release is gone and the object stays (its uninstall kept it), a plan
// without take_ownership names the release that left it and take_ownership, and with it the
// install adopts the object.
func TestAccRelease_takeOwnershipRefusesAnotherReleasesObject(t *testing.T) {
	e := testAccRelease(t)
	secrets := driver.NewSecrets(e.kube.CoreV1().Secrets(e.namespace))
	other := &release.Release{
		Name: "other", Namespace: e.namespace, Version: 1, Info: &release.Info{Status: rcommon.StatusDeployed},
		Chart: &chartv2.Chart{Metadata: &chartv2.Metadata{Name: "other", Version: "1.0.0", APIVersion: "v2"}},
	}
	if err := secrets.Create("sh.helm.release.v1.other.v1", other); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:   "web",
		Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm"},
		Annotations: map[string]string{
			"meta.helm.sh/release-name": "other", "meta.helm.sh/release-namespace": e.namespace,
		},
	}, Data: map[string]string{"greeting": "from-other"}}
	if _, err := e.kube.CoreV1().ConfigMaps(e.namespace).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             e.nothingLeft(t),
		Steps: []resource.TestStep{
			{
				Config:      e.takingOver(true, "from-terraform"),
				PlanOnly:    true,
				ExpectError: wrappedText("Object Belongs to Another Release", "ConfigMap web", "Helm release "+e.namespace+"/other"),
			},
			{
				PreConfig: func() {
					if _, err := secrets.Delete("sh.helm.release.v1.other.v1"); err != nil {
						t.Fatal(err)
					}
				},
				Config:      e.takingOver(false, "from-terraform"),
				PlanOnly:    true,
				ExpectError: wrappedText("Object Already Exists", "ConfigMap web", "Helm release "+e.namespace+"/other, which no longer exists", "Set take_ownership = true"),
			},
			{
				Config: e.takingOver(true, "from-terraform"),
				Check:  e.configMapGreeting("from-terraform"),
			},
			{
				Config:           e.takingOver(true, "from-terraform"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}
