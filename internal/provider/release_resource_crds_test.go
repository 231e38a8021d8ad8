package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testing/testca"
)

// fixtureGizmoGroup is the API group of the Gizmo kind in the operator and app fixture charts.
const fixtureGizmoGroup = "ops.test.gitlabk8s.io"

// gizmoCharts are the operator and app charts of one test, with the Gizmo kind in an API group
// of the test's own, since definitions are cluster-wide.
type gizmoCharts struct {
	kube          *kubernetes.Clientset
	operator, app string
	group         string
}

// writeGizmoCharts writes the operator and app fixture charts with the Gizmo kind in a group
// of this test's own, and deletes its CustomResourceDefinition when the test ends (Helm never
// deletes the definitions in crds/).
func writeGizmoCharts(t *testing.T) *gizmoCharts {
	t.Helper()
	kc, err := testAccCluster(t).Clientset(testcluster.AdminContext)
	if err != nil {
		t.Fatal(err)
	}
	g := &gizmoCharts{kube: kc, group: fmt.Sprintf("g%04x.%s", rand.IntN(1<<16), fixtureGizmoGroup)}
	if _, err := kc.Discovery().ServerResourcesForGroupVersion(g.group + "/v1"); err == nil {
		t.Fatalf("the cluster already serves %s/v1, which this test's operator must define", g.group)
	}
	g.operator = g.writeChart(t, "operator", nil)
	g.app = g.writeChart(t, "app", nil)
	crd := "gizmos." + g.group
	t.Cleanup(func() {
		err := kc.RESTClient().Delete().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd).Do(context.Background()).Error()
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete CustomResourceDefinition %s: %v", crd, err)
		}
	})
	return g
}

// writeChart writes the fixture chart called name in the test's group, with replaced files
// (by path in the chart) in place of the fixture's, and returns its directory.
func (g *gizmoCharts) writeChart(t *testing.T, name string, replaced map[string]string) string {
	t.Helper()
	fixture := chartserver.FixtureChart(name)
	files := map[string]string{}
	err := filepath.WalkDir(fixture, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(fixture, path)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for file, content := range replaced {
		files[file] = content
	}
	for file, content := range files {
		files[file] = strings.ReplaceAll(content, fixtureGizmoGroup, g.group)
	}
	return writeChart(t, name, files)
}

// releases is the operator release and the app release relying on its definitions, in
// namespace (an HCL expression); appBody adds attributes to the app.
func (g *gizmoCharts) releases(namespace, appBody string) string {
	return g.releasesOf(g.operator, namespace, "", appBody)
}

// releasesOf is releases with the operator chart in operatorDir and operatorBody added to the
// operator.
func (g *gizmoCharts) releasesOf(operatorDir, namespace, operatorBody, appBody string) string {
	return fmt.Sprintf(`
resource "gitlabk8s_release" "operator" {
  name      = "operator"
  namespace = %[1]s
  chart     = %[2]q
%[5]s
}

resource "gitlabk8s_release" "app" {
  name      = "app"
  namespace = %[1]s
  chart     = %[3]q
  crds_from = gitlabk8s_release.operator.crds
%[4]s
}
`, namespace, operatorDir, g.app, appBody, operatorBody)
}

// gizmoIs checks the app's Gizmo in namespace (read from the state when it names a resource
// attribute "<address>.<attribute>") has spec.size size, or is gone when size is 0.
func (g *gizmoCharts) gizmoIs(namespace func(*terraform.State) string, size int) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		path := fmt.Sprintf("/apis/%s/v1/namespaces/%s/gizmos/app", g.group, namespace(s))
		body, err := g.kube.RESTClient().Get().AbsPath(path).DoRaw(context.Background())
		switch {
		case size == 0 && apierrors.IsNotFound(err):
			return nil
		case size == 0 && err == nil:
			return fmt.Errorf("the Gizmo is still there after destroy: %s", body)
		case err != nil:
			return fmt.Errorf("get the app's Gizmo: %w", err)
		case !strings.Contains(string(body), fmt.Sprintf(`"size":%d`, size)):
			return fmt.Errorf("the live Gizmo is %s, want size %d", body, size)
		}
		return nil
	}
}

// gizmoSteps are the steps of operator and app added together in config(appBody): a Gizmo the
// definition refuses fails the plan, naming the field and crds_from; a valid one is planned with
// the operator's crds known, applied, and planned again as empty.
func (g *gizmoCharts) gizmoSteps(config func(appBody string) string, namespace func(*terraform.State) string) []resource.TestStep {
	crdKey := "CustomResourceDefinition.apiextensions.k8s.io/gizmos." + g.group
	return []resource.TestStep{
		{
			Config:      config(`  set = { size = "50" }`),
			ExpectError: wrappedPattern(`(?s)Invalid Object Fields.*Gizmo\.` + strings.ReplaceAll(g.group, ".", `\.`) + `/app.*in crds_from.*\.spec\.size: Invalid value.*less than or equal to 10`),
		},
		{
			Config: config(""),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue("gitlabk8s_release.operator", tfjsonpath.New("crds"), knownvalue.ListExact([]knownvalue.Check{
						knownStringContaining("name: gizmos." + g.group),
					})),
					plancheck.ExpectKnownValue("gitlabk8s_release.operator", tfjsonpathManifest(crdKey), knownStringContaining("maximum: 10")),
					plancheck.ExpectKnownValue("gitlabk8s_release.app", tfjsonpathManifest("Gizmo."+g.group+"/app"), knownStringContaining("size: 3")),
					plancheck.ExpectKnownValue("gitlabk8s_release.app", tfjsonpath.New("crds"), knownvalue.ListExact(nil)),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: g.gizmoIs(namespace, 3),
		},
	}
}

// An operator and an app with a custom resource of the operator's kind, added to an existing
// environment in one change: the cluster serves no Gizmo at plan time, so the app's Gizmo is
// checked against crds_from, applied after the definition is established, and destroyed.
func TestAccRelease_crdsFromAnotherReleaseInAnExistingEnvironment(t *testing.T) {
	e := testAccRelease(t)
	g := writeGizmoCharts(t)
	namespace := func(*terraform.State) string { return e.namespace }
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps:                    g.gizmoSteps(func(body string) string { return g.releases(fmt.Sprintf("%q", e.namespace), body) }, namespace),
		CheckDestroy:             g.gizmoIs(namespace, 0),
	})
}

// The same in a new environment, whose namespace does not exist at plan time: nothing in it is
// dry-run, and the app's Gizmo is still checked against crds_from.
func TestAccRelease_crdsFromAnotherReleaseInANewEnvironment(t *testing.T) {
	g := writeGizmoCharts(t)
	const environment = "gitlabk8s_environment.review"
	config := func(body string) string {
		return fmt.Sprintf(`
provider "gitlabk8s" {
  gitlab = {
    project_id        = "42"
    project_path_slug = "group-app"
  }
}

resource "gitlabk8s_environment" "review" {
  name = "review/crds-%s"
}
`, strings.Split(g.group, ".")[0]) + g.releases(environment+".namespace", body)
	}
	namespace := func(s *terraform.State) string {
		return s.RootModule().Resources[environment].Primary.Attributes["namespace"]
	}
	var last string
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: g.gizmoSteps(config, func(s *terraform.State) string {
			last = namespace(s)
			return last
		}),
		CheckDestroy: g.gizmoIs(func(*terraform.State) string { return last }, 0),
	})
}

// gizmoDefinition is the operator chart's definition with versions, the first of them the
// storage version, each with the fixture's schema.
func gizmoDefinition(versions ...string) string {
	var b strings.Builder
	b.WriteString(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.ops.test.gitlabk8s.io
spec:
  group: ops.test.gitlabk8s.io
  scope: Namespaced
  names: {kind: Gizmo, listKind: GizmoList, plural: gizmos, singular: gizmo}
  versions:
`)
	for i, v := range versions {
		fmt.Fprintf(&b, `    - name: %s
      served: true
      storage: %t
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [size]
              properties:
                size: {type: integer, minimum: 1, maximum: 10}
`, v, i == 0)
	}
	return b.String()
}

// liveGizmoVersions checks the cluster's Gizmo definition serves exactly versions.
func (g *gizmoCharts) liveGizmoVersions(versions ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		body, err := g.kube.RESTClient().Get().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "gizmos."+g.group).DoRaw(context.Background())
		if err != nil {
			return err
		}
		for _, v := range []string{"v1", "v2"} {
			if want, has := slices.Contains(versions, v), strings.Contains(string(body), `"name":"`+v+`"`); want != has {
				return fmt.Errorf("the live definition serves %s: %t, want %t: %s", v, has, want, body)
			}
		}
		return nil
	}
}

// Under create_replace, a new version of the operator's definition shows in its plan, is applied
// before the upgrade, and the plan after it is empty; the app moves to the new version in the
// same change, its custom resource checked against the new definition in crds_from (one the
// schema refuses fails the plan); a definition that drops the version the
// cluster stores objects in is refused by the plan, naming it.
func TestAccRelease_crdPolicyReplacesDefinitions(t *testing.T) {
	e := testAccRelease(t)
	g := writeGizmoCharts(t)
	crdKey := "CustomResourceDefinition.apiextensions.k8s.io/gizmos." + g.group
	withDefinition := func(versions ...string) string {
		return g.writeChart(t, "operator", map[string]string{"crds/gizmos.yaml": gizmoDefinition(versions...)})
	}
	bumped, dropped := withDefinition("v1", "v2"), withDefinition("v2")
	config := func(operator, appBody string) string {
		return g.releasesOf(operator, fmt.Sprintf("%q", e.namespace), `  crd_policy = "create_replace"`, appBody)
	}
	first := g.operator
	const onV2 = `  set = { gizmoVersion = "v2" }`
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config(first, ""), Check: g.liveGizmoVersions("v1")},
			{
				// The cluster serves only v1 at plan time: the app's v2 Gizmo is checked against
				// the bumped definition in crds_from.
				Config:      config(bumped, `  set = { gizmoVersion = "v2", size = "50" }`),
				ExpectError: wrappedPattern(`(?s)Invalid Object Fields.*Gizmo\.` + strings.ReplaceAll(g.group, ".", `\.`) + `/app.*in crds_from.*\.spec\.size: Invalid value.*less than or equal to 10`),
			},
			{
				Config: config(bumped, onV2),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gitlabk8s_release.operator", plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue("gitlabk8s_release.operator", tfjsonpathManifest(crdKey), knownStringContaining("name: v2")),
						plancheck.ExpectKnownValue("gitlabk8s_release.app", tfjsonpathManifest("Gizmo."+g.group+"/app"), knownStringContaining("/v2")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeTestCheckFunc(g.liveGizmoVersions("v1", "v2"), g.gizmoIs(func(*terraform.State) string { return e.namespace }, 3)),
			},
			{
				Config:      config(dropped, onV2),
				ExpectError: wrappedPattern(`(?s)Stored Version Dropped.*gizmos\.` + strings.ReplaceAll(g.group, ".", `\.`) + ` no longer lists v1`),
			},
		},
	})
}

// Under create_replace the definitions of crds/ are applied whole before every upgrade; a
// conversion webhook's caBundle left empty there is still the injector's: what it wrote stays
// through an upgrade, and no plan shows it.
func TestAccRelease_crdPolicyLeavesAnInjectedConversionCABundle(t *testing.T) {
	e := testAccRelease(t)
	g := writeGizmoCharts(t)
	definition := gizmoDefinition("v1", "v2") + `  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig:
        caBundle: ""
        service: {name: operator-webhook, namespace: default, path: /convert}
`
	operator := g.writeChart(t, "operator", map[string]string{"crds/gizmos.yaml": definition})
	config := func(mode string) string {
		return fmt.Sprintf(`
resource "gitlabk8s_release" "operator" {
  name       = "operator"
  namespace  = %q
  chart      = %q
  crd_policy = "create_replace"
  set        = { mode = %q }
}
`, e.namespace, operator, mode)
	}
	// The API server parses a definition's caBundle, so the injected one is a real CA's.
	ca, err := testca.New("operator-webhook")
	if err != nil {
		t.Fatal(err)
	}
	caBundle := ca.CertPEM
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config("watch"), Check: g.conversionCABundleIs(nil)},
			{
				PreConfig:        func() { g.injectConversionCABundle(t, caBundle) },
				Config:           config("watch"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: config("serve"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{expectManifestChanges("gitlabk8s_release.operator", map[string]*manifestLines{
						"ConfigMap/operator-operator": {removed: []string{"mode: watch"}, added: []string{"mode: serve"}},
					})},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: g.conversionCABundleIs(caBundle),
			},
		},
	})
}

// Under create_replace the definitions of crds/ are read from the cluster at refresh, as every
// upgrade applies them: one changed in the cluster shows in the plan and the apply puts it
// back, one deleted is planned to be added and the apply creates it again.
func TestAccRelease_crdPolicyReplaceShowsDefinitionsChangedInTheCluster(t *testing.T) {
	e := testAccRelease(t)
	g := writeGizmoCharts(t)
	operator := g.writeChart(t, "operator", map[string]string{"crds/gizmos.yaml": gizmoDefinition("v1")})
	config := fmt.Sprintf(`
resource "gitlabk8s_release" "operator" {
  name       = "operator"
  namespace  = %q
  chart      = %q
  crd_policy = "create_replace"
}
`, e.namespace, operator)
	path := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos." + g.group
	maximum := "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/size/maximum"
	maximumIs := func(want string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			body, err := g.kube.RESTClient().Get().AbsPath(path).DoRaw(context.Background())
			if err != nil {
				return err
			}
			if !strings.Contains(string(body), `"maximum":`+want) {
				return fmt.Errorf("the live definition does not have maximum %s: %s", want, body)
			}
			return nil
		}
	}
	applied := resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config, ConfigPlanChecks: applied, Check: maximumIs("10")},
			{
				PreConfig: func() {
					patch := fmt.Sprintf(`[{"op":"replace","path":%q,"value":20}]`, maximum)
					if err := g.kube.RESTClient().Patch(types.JSONPatchType).AbsPath(path).Body([]byte(patch)).Do(context.Background()).Error(); err != nil {
						t.Fatal(err)
					}
				},
				Config:             config,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{Config: config, ConfigPlanChecks: applied, Check: maximumIs("10")},
			{
				PreConfig: func() {
					if err := g.kube.RESTClient().Delete().AbsPath(path).Do(context.Background()).Error(); err != nil {
						t.Fatal(err)
					}
					err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
						err := g.kube.RESTClient().Get().AbsPath(path).Do(ctx).Error()
						return apierrors.IsNotFound(err), nil
					})
					if err != nil {
						t.Fatalf("the definition was never deleted: %v", err)
					}
				},
				Config:             config,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{Config: config, ConfigPlanChecks: applied, Check: maximumIs("10")},
		},
	})
}

// injectConversionCABundle writes caBundle into the conversion webhook of the test's Gizmo
// definition as cert-manager's CA injector does: an update as its field manager.
func (g *gizmoCharts) injectConversionCABundle(t *testing.T, caBundle []byte) {
	t.Helper()
	ctx := context.Background()
	path := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos." + g.group
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var crd map[string]any
		body, err := g.kube.RESTClient().Get().AbsPath(path).DoRaw(ctx)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(body, &crd); err != nil {
			return err
		}
		if err := unstructured.SetNestedField(crd, base64.StdEncoding.EncodeToString(caBundle), "spec", "conversion", "webhook", "clientConfig", "caBundle"); err != nil {
			return err
		}
		updated, err := json.Marshal(crd)
		if err != nil {
			return err
		}
		return g.kube.RESTClient().Put().AbsPath(path).Param("fieldManager", "cert-manager-cainjector").Body(updated).Do(ctx).Error()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// conversionCABundleIs checks the caBundle of the conversion webhook of the test's Gizmo
// definition.
func (g *gizmoCharts) conversionCABundleIs(want []byte) resource.TestCheckFunc {
	return func(*terraform.State) error {
		body, err := g.kube.RESTClient().Get().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos." + g.group).DoRaw(context.Background())
		if err != nil {
			return err
		}
		var crd map[string]any
		if err := json.Unmarshal(body, &crd); err != nil {
			return err
		}
		encoded, _, _ := unstructured.NestedString(crd, "spec", "conversion", "webhook", "clientConfig", "caBundle")
		if got, _ := base64.StdEncoding.DecodeString(encoded); !bytes.Equal(got, want) {
			return fmt.Errorf("the definition's conversion caBundle is %q, want %q", got, want)
		}
		return nil
	}
}

// Under create, Helm's rule, an upgrade leaves the definitions of crds/ as the cluster has them:
// the plan that shows one changed says so, naming it and the policy that would apply it, the
// apply leaves the cluster's definition as it was, and the plan after it is empty. The plan
// that turns create_replace on then compares the chart's definitions with the cluster's, which
// the refresh under create did not read, and its apply replaces them.
func TestAccRelease_crdPolicyCreateSaysTheUpgradeLeavesDefinitions(t *testing.T) {
	e := testAccRelease(t)
	g := writeGizmoCharts(t)
	bumped := g.writeChart(t, "operator", map[string]string{"crds/gizmos.yaml": gizmoDefinition("v1", "v2")})
	namespace := fmt.Sprintf("%q", e.namespace)
	cli := newTerraformCLI(t, suiteCLI(t))
	cli.writeConfig(g.releasesOf(g.operator, namespace, "", ""))
	if out := cli.mustRun("apply", "-auto-approve"); strings.Contains(out, "Not Upgraded") {
		t.Errorf("the install warns that definitions are not upgraded:\n%s", out)
	}
	cli.writeConfig(g.releasesOf(bumped, namespace, "", ""))
	out := strings.Join(strings.Fields(cli.mustRun("apply", "-auto-approve")), " ")
	for _, want := range []string{
		"Warning: CustomResourceDefinitions Not Upgraded",
		"the chart changes or adds these definitions in its crds/ directories: CustomResourceDefinition.apiextensions.k8s.io/gizmos." + g.group + ".",
		`Set crd_policy = "create_replace" to apply them`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the upgrade's plan does not say %q:\n%s", want, out)
		}
	}
	if err := g.liveGizmoVersions("v1")(nil); err != nil {
		t.Error(err)
	}
	if plan := cli.mustRun("plan"); !strings.Contains(plan, "No changes.") || strings.Contains(plan, "Not Upgraded") {
		t.Errorf("the plan after the upgrade:\n%s\nwant no changes and no warning", plan)
	}

	// Turning create_replace on upgrades the release, though manifests hold the chart's
	// definition already, and applies it: the cluster's is not the chart's.
	cli.writeConfig(g.releasesOf(bumped, namespace, `  crd_policy = "create_replace"`, ""))
	out = strings.Join(strings.Fields(cli.mustRun("apply", "-auto-approve")), " ")
	for _, want := range []string{
		"Warning: CustomResourceDefinitions Replaced",
		"are not the chart's: CustomResourceDefinition.apiextensions.k8s.io/gizmos." + g.group + ".",
		"1 changed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the apply turning create_replace on does not say %q:\n%s", want, out)
		}
	}
	if err := g.liveGizmoVersions("v1", "v2")(nil); err != nil {
		t.Error(err)
	}
	if plan := cli.mustRun("plan"); !strings.Contains(plan, "No changes.") || strings.Contains(plan, "Replaced") {
		t.Errorf("the plan after turning create_replace on:\n%s\nwant no changes and no warning", plan)
	}

	// Back under create, a chart dropping v1, which the cluster stores: the upgrade leaves the
	// cluster's definition, and the state records the chart's. Turning create_replace on again
	// checks the chart's against the cluster's, not against the state's, and refuses the plan.
	dropped := g.writeChart(t, "operator", map[string]string{"crds/gizmos.yaml": gizmoDefinition("v2")})
	cli.writeConfig(g.releasesOf(dropped, namespace, "", ""))
	if out := cli.mustRun("apply", "-auto-approve"); !strings.Contains(out, "Not Upgraded") {
		t.Errorf("the upgrade under create does not warn that the definition is not upgraded:\n%s", out)
	}
	if err := g.liveGizmoVersions("v1", "v2")(nil); err != nil {
		t.Error(err)
	}
	cli.writeConfig(g.releasesOf(dropped, namespace, `  crd_policy = "create_replace"`, ""))
	out, err := cli.run("plan")
	out = strings.Join(strings.Fields(out), " ")
	if want := "gizmos." + g.group + " no longer lists v1"; err == nil || !strings.Contains(out, "Stored Version Dropped") || !strings.Contains(out, want) {
		t.Errorf("the plan turning create_replace on over a cluster storing v1 (%v):\n%s\nwant it refused, saying %q", err, out, want)
	}
}
