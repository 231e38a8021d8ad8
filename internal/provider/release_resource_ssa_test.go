package provider

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
)

// helmMajor returns the helm CLI at path when its major version is major, and skips otherwise.
func helmMajor(t *testing.T, path, major string) string {
	t.Helper()
	out, err := exec.Command(path, "version", "--short").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", path, err, out)
	}
	if !strings.HasPrefix(string(out), major+".") {
		t.Skipf("%s is helm %s; this test needs helm %s (GITLABK8S_HELM, scripts/build-helm.sh)", path, strings.TrimSpace(string(out)), major)
	}
	return path
}

// renamedBinary returns a link to path called name.
func renamedBinary(t *testing.T, path, name string) string {
	t.Helper()
	link := filepath.Join(t.TempDir(), name)
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// webManagedFields returns the managedFields of the Deployment and the ConfigMap web.
func (e *releaseTestEnv) webManagedFields(t *testing.T) map[string][]metav1.ManagedFieldsEntry {
	t.Helper()
	ctx := context.Background()
	d, err := e.kube.AppsV1().Deployments(e.namespace).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]metav1.ManagedFieldsEntry{"Deployment/web": d.ManagedFields, "ConfigMap/web": cm.ManagedFields}
}

// helmClientSideManagers are the managers Helm's client-side apply writes as: the helm CLI's, and
// the provider's before it applied server-side.
var helmClientSideManagers = []string{"helm", helmrelease.FieldManager}

// checkAppliedServerSide checks that the provider's manager applies web's objects server-side
// and that no client-side manager of Helm still owns a field of them.
func (e *releaseTestEnv) checkAppliedServerSide(t *testing.T) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for object, entries := range e.webManagedFields(t) {
			applied := false
			for _, m := range entries {
				if m.Manager == helmrelease.FieldManager && m.Operation == metav1.ManagedFieldsOperationApply && m.Subresource == "" {
					applied = true
				}
				if slices.Contains(helmClientSideManagers, m.Manager) && m.Operation == metav1.ManagedFieldsOperationUpdate {
					return fmt.Errorf("%s: %s still owns fields by a client-side %s: %s", object, m.Manager, m.Operation, m.FieldsV1)
				}
			}
			if !applied {
				return fmt.Errorf("%s: no server-side apply of %s in managedFields %+v", object, helmrelease.FieldManager, entries)
			}
		}
		return nil
	}
}

// checkWebWithout checks that the live ConfigMap web has no key extra and the container of
// the Deployment web no variable MODE.
func (e *releaseTestEnv) checkWebWithout() resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		cm, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if v, ok := cm.Data["extra"]; ok {
			return fmt.Errorf("ConfigMap web still has data.extra = %q, which the chart no longer sets", v)
		}
		d, err := e.kube.AppsV1().Deployments(e.namespace).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, env := range d.Spec.Template.Spec.Containers[0].Env {
			if env.Name == "MODE" {
				return fmt.Errorf("Deployment web still has the variable MODE = %q, which the chart no longer sets", env.Value)
			}
		}
		return nil
	}
}

// A release a helm CLI installed by client-side apply (helm 3, helm 4 with --server-side=false)
// is imported with no change, and the provider's first upgrade applies it server-side: a value
// dropped from the configuration (a ConfigMap key, a container's variable the helm CLI wrote)
// is gone from the live objects, the provider's manager owns the fields by Apply and Helm's
// client-side managers own none, and the plans before and after are empty.
func TestAccRelease_clientSideReleaseMovesToServerSideApply(t *testing.T) {
	for _, c := range []struct {
		name string
		helm func(t *testing.T) string
		args []string
	}{
		{name: "helm3", helm: func(t *testing.T) string { return helmMajor(t, helmBinary(t), "v3") }},
		{name: "helm4-client-side", helm: helm4Binary, args: []string{"--server-side=false"}},
		// The API server names the manager of a client-side apply after the binary: helm 4 run
		// as gitlabk8s-helm writes what the provider wrote before it applied server-side.
		{name: "provider-client-side", helm: func(t *testing.T) string { return renamedBinary(t, helm4Binary(t), helmrelease.FieldManager) }, args: []string{"--server-side=false"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := testAccRelease(t)
			runHelm := e.helmCLIOf(t, c.helm(t))
			runHelm(append([]string{"install", "web", chartserver.FixtureChart("web"), "--wait",
				"--set", "config.extra=from-cli", "--set", "env.MODE=cli"}, c.args...)...)
			imported := e.webRelease(`  set = { "config.extra" = "from-cli", "env.MODE" = "cli" }`)
			adopt := imported + fmt.Sprintf("\nimport {\n  to = %s\n  id = \"%s/web\"\n}\n", webAddress, e.namespace)
			upgraded := e.webRelease(`  set = { "image.tag" = "1.26.0" }`)
			testAccResourceTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{
					{
						Config: adopt,
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(1)),
						}},
					},
					{
						Config:           imported,
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
					},
					{
						Config: upgraded,
						ConfigStateChecks: []statecheck.StateCheck{
							statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
						},
						Check: resource.ComposeAggregateTestCheckFunc(
							e.checkDeployment("registry.example/web:1.26.0", 1),
							e.checkWebWithout(),
							e.checkAppliedServerSide(t),
						),
					},
					{
						Config:           upgraded,
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
					},
				},
			})
		})
	}
}

// An upgrade by the helm 4 CLI of a release the provider applies (helm 4 applies server-side, as
// the manager helm, and forces conflicts only when told): one that changes a field the
// provider set fails on the conflict, naming the provider's manager, and changes nothing of
// it; the provider's next apply upgrades over the failed revision. With --force-conflicts the
// upgrade succeeds, the next plan shows exactly its change as drift, and the apply restores it.
func TestAccRelease_helm4UpgradeOfAProviderRelease(t *testing.T) {
	e := testAccRelease(t)
	helm4 := helm4Binary(t)
	config := e.webRelease(`  set = { "env.MODE" = "review" }`)
	hotfix := []string{"upgrade", "web", chartserver.FixtureChart("web"), "--reuse-values", "--set", "image.tag=1.26.0"}
	liveImage := func(want string) {
		t.Helper()
		if err := e.checkDeployment(want, 1)(nil); err != nil {
			t.Fatal(err)
		}
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					out, err := e.runHelm(t, helm4, hotfix...)
					conflict := fmt.Sprintf(`conflict with %q: .spec.template.spec.containers[name="web"].image`, helmrelease.FieldManager)
					if err == nil || !strings.Contains(out, conflict) {
						t.Fatalf("helm 4 upgrade without --force-conflicts: %v, want a failure with %s:\n%s", err, conflict, out)
					}
					liveImage("registry.example/web:1.25.0")
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(webAddress, plancheck.ResourceActionUpdate),
					expectManifestChanges(webAddress, map[string]*manifestLines{}),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(3)),
				},
				Check: e.checkDeployment("registry.example/web:1.25.0", 1),
			},
			{
				PreConfig: func() {
					e.helmCLIOf(t, helm4)(append(hotfix, "--force-conflicts")...)
					liveImage("registry.example/web:1.26.0")
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectManifestChanges(webAddress, map[string]*manifestLines{
						"Deployment.apps/web": {removed: []string{"image: registry.example/web:1.26.0"}, added: []string{"image: registry.example/web:1.25.0"}},
					}),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(5)),
				},
				Check: e.checkDeployment("registry.example/web:1.25.0", 1),
			},
			{
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// The forced server-side apply of an upgrade leaves alone what the plan does not count as
// drift: the replicas an autoscaler set (as kube-controller-manager, through the scale
// subresource) and a field of a manager ignore_differences names keep their values across an
// upgrade made for another change.
func TestAccRelease_upgradeLeavesOthersFieldsAlone(t *testing.T) {
	e := testAccRelease(t)
	ignoring := `  ignore_differences = [{ kind = "Deployment", managers = ["image-controller"] }]`
	review := e.webRelease(ignoring + "\n" + `  set = { "env.MODE" = "review" }`)
	staging := e.webRelease(ignoring + "\n" + `  set = { "env.MODE" = "staging" }`)
	modeIs := func(want string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			d, err := e.kube.AppsV1().Deployments(e.namespace).Get(context.Background(), "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, env := range d.Spec.Template.Spec.Containers[0].Env {
				if env.Name == "MODE" && env.Value == want {
					return nil
				}
			}
			return fmt.Errorf("the container's MODE is not %q: %+v", want, d.Spec.Template.Spec.Containers[0].Env)
		}
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: review},
			{
				PreConfig: func() {
					e.scaleDeployment(t, 3, "kube-controller-manager")
					e.setImage(t, "registry.example/web:patched", "image-controller")
				},
				Config: staging,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectManifestChanges(webAddress, map[string]*manifestLines{
						"Deployment.apps/web": {removed: []string{"value: review"}, added: []string{"value: staging"}},
					}),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(modeIs("staging"), e.checkDeployment("registry.example/web:patched", 3)),
			},
			{
				Config:           staging,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// kubectl scale is not left alone: the apply restores the chart's replicas.
				PreConfig: func() { e.scaleDeployment(t, 2, "kubectl") },
				Config:    review,
				Check:     resource.ComposeAggregateTestCheckFunc(modeIs("review"), e.checkDeployment("registry.example/web:patched", 1)),
			},
		},
	})
}

// A field left to others is theirs only while the configuration does not change it: a new
// image.tag, with ignore_differences naming the manager that patched the image, shows in the
// plan and the apply sets it, and a new replicaCount over the replicas an autoscaler set
// (kube-controller-manager, through the scale subresource) does the same. What the
// configuration did not change stays as the other manager set it.
func TestAccRelease_changeOfAFieldLeftToOthersIsApplied(t *testing.T) {
	e := testAccRelease(t)
	release := func(tag, replicas string) string {
		return e.webRelease(fmt.Sprintf(`  ignore_differences = [{ kind = "Deployment", managers = ["image-controller"] }]
  set = { "image.tag" = %q, "replicaCount" = %q }`, tag, replicas))
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: release("1.25.0", "1")},
			{
				PreConfig: func() {
					e.setImage(t, "registry.example/web:patched", "image-controller")
					e.scaleDeployment(t, 3, "kube-controller-manager")
				},
				Config:           release("1.25.0", "1"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: release("1.26.0", "1"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectManifestChanges(webAddress, map[string]*manifestLines{
						"Deployment.apps/web": {removed: []string{"image: registry.example/web:1.25.0"}, added: []string{"image: registry.example/web:1.26.0"}},
					}),
				}},
				Check: e.checkDeployment("registry.example/web:1.26.0", 3),
			},
			{
				Config:           release("1.26.0", "1"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				PreConfig: func() { e.setImage(t, "registry.example/web:patched-again", "image-controller") },
				Config:    release("1.26.0", "2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectManifestChanges(webAddress, map[string]*manifestLines{
						"Deployment.apps/web": {removed: []string{"replicas: 1"}, added: []string{"replicas: 2"}},
					}),
				}},
				Check: e.checkDeployment("registry.example/web:patched-again", 2),
			},
			{
				Config:           release("1.26.0", "2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// injectCABundle writes caBundle into the webhook of the zoo-injected-ca release "zoo" as the
// injector's server does when it starts: an update as the field manager vault-k8s.
func (e *releaseTestEnv) injectCABundle(t *testing.T, caBundle []byte) {
	t.Helper()
	ctx := context.Background()
	webhooks := e.kube.AdmissionregistrationV1().MutatingWebhookConfigurations()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w, err := webhooks.Get(ctx, e.namespace+"-"+zooRelease, metav1.GetOptions{})
		if err != nil {
			return err
		}
		w.Webhooks[0].ClientConfig.CABundle = caBundle
		_, err = webhooks.Update(ctx, w, metav1.UpdateOptions{FieldManager: "vault-k8s"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkCABundle checks the caBundle of the webhook of the zoo-injected-ca release "zoo".
func (e *releaseTestEnv) checkCABundle(want []byte) resource.TestCheckFunc {
	return func(*terraform.State) error {
		w, err := e.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(context.Background(), e.namespace+"-"+zooRelease, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := w.Webhooks[0].ClientConfig.CABundle; !bytes.Equal(got, want) {
			return fmt.Errorf("the webhook's caBundle is %q, want %q", got, want)
		}
		return nil
	}
}

// A webhook's caBundle that the chart leaves empty is its controller's to write: once the
// injector wrote its certificate authority there, the plan shows nothing, an upgrade made for
// another change keeps it, where a forced apply of the chart's "" would clear it and leave the
// webhook unable to call the injector, and the plan after that shows nothing either.
func TestAccRelease_injectedCABundleIsLeftToItsController(t *testing.T) {
	e := testAccRelease(t)
	caBundle := []byte("-----BEGIN CERTIFICATE-----\ninjected\n-----END CERTIFICATE-----\n")
	release := func(message string) string {
		return e.fixtureRelease("zoo", "zoo-injected-ca", fmt.Sprintf(`  set = { message = %q }`, message))
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: release("one"), Check: e.checkCABundle(nil)},
			{
				PreConfig:        func() { e.injectCABundle(t, caBundle) },
				Config:           release("one"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: release("two"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectManifestChanges("gitlabk8s_release.zoo", map[string]*manifestLines{
						"ConfigMap/zoo-config": {removed: []string{"message: one"}, added: []string{"message: two"}},
					}),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(e.checkCABundle(caBundle), e.checkConfigMapData("zoo-config", "message", "two")),
			},
			{
				Config:           release("two"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}
