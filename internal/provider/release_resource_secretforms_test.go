package provider

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

func secretFormsConfig(namespace, password string) string {
	return "\nprovider \"gitlabk8s\" {}\n" + releaseConfig("web", namespace, chartserver.FixtureChart("secret-forms"), fmt.Sprintf(`  set_sensitive = {
    "db.password"    = %q
    apiToken         = "tok-1234-abcd"
    "admin.password" = "Adm1n&s3cret/pass"
  }`, password))
}

// TestAccRelease_noFormOfASensitiveValueShows applies a chart that writes a strong password in
// the ways public charts do (a DSN with urlquery, JSON, basic auth, upper, trunc, base64 twice,
// checksum annotations, hooks, a whole config file base64-encoded) and checks that no form of
// it shows in a plan, in `terraform show -json` of the plan and of the state outside sensitive
// attributes, or in the apply's output, through a change of the password.
func TestAccRelease_noFormOfASensitiveValueShows(t *testing.T) {
	e := testAccRelease(t)
	suffix := fmt.Sprintf("%08x", rand.Uint32())
	password := `Tr0ub&dor 3/c+rr%ct#h@rse:` + suffix
	changed := `N3w&pass w/rd+100%#` + suffix

	e.passwordNeverShows(t, secretFormsConfig, password, changed, `"Secret/web-forms"`,
		`"Deployment.apps/web-forms"`, `dsn: (sensitive value`, `checksum/password: (sensitive value`, `name: DATABASE_URL`, `"ConfigMap/web-forms-hook"`)
}

// passwordNeverShows applies config (a release of the secret-forms chart in the test's
// namespace) with password, then with changed, and checks that no form of either shows in the
// plans, in `terraform show -json` of the plan and of the state outside sensitive attributes,
// in the applies' output or in the provider's trace log; that the password reaches the
// cluster; that the plan after each apply is empty; that the first plan shows firstPlan and
// the plan of the change updates changedKey.
func (e *releaseTestEnv) passwordNeverShows(t *testing.T, config func(namespace, password string) string, password, changed, changedKey string, firstPlan ...string) {
	t.Helper()
	cli := newTerraformCLI(t, suiteCLI(t))
	cli.writeConfig(config(e.namespace, password))
	plan := cli.mustRun("plan", "-out=tfplan")
	assertNoPasswordForm(t, "the first plan", plan, password)
	for _, want := range firstPlan {
		if !strings.Contains(plan, want) {
			t.Errorf("the first plan does not show %q:\n%s", want, plan)
		}
	}
	planJSON, n := nonSensitiveValues(t, cli.mustRun("show", "-json", "tfplan"))
	if n == 0 || !strings.Contains(planJSON, "dsn: (sensitive value") {
		t.Fatalf("terraform show -json tfplan holds no manifests of the release: %s", planJSON)
	}
	assertNoPasswordForm(t, "terraform show -json tfplan", planJSON, password)
	assertNoPasswordForm(t, "terraform apply", cli.mustRun("apply", "tfplan"), password)

	cm, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(t.Context(), "web-forms", metav1.GetOptions{})
	if want := "postgres://app:" + url.QueryEscape(password) + "@db/app"; err != nil || cm.Data["dsn"] != want {
		t.Fatalf("ConfigMap web-forms dsn = %q (err %v), want %q: the password must reach the cluster", cm.Data["dsn"], err, want)
	}
	stateJSON, _ := nonSensitiveValues(t, cli.mustRun("show", "-json"))
	assertNoPasswordForm(t, "terraform show -json (state)", stateJSON, password)
	if out := cli.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Errorf("the plan after the apply is not empty:\n%s", out)
	}

	// A changed password shows as a changed object, and no form of either password.
	cli.writeConfig(config(e.namespace, changed))
	plan = cli.mustRun("plan", "-out=tfplan")
	assertNoPasswordForm(t, "the plan of the changed password", plan, password, changed)
	if !strings.Contains(plan, "update in-place") || !strings.Contains(plan, changedKey) {
		t.Errorf("the plan of a changed password does not show %s changing:\n%s", changedKey, plan)
	}
	assertNoPasswordForm(t, "terraform apply of the changed password", cli.mustRun("apply", "tfplan"), password, changed)
	stateJSON, _ = nonSensitiveValues(t, cli.mustRun("show", "-json"))
	assertNoPasswordForm(t, "terraform show -json (state) after the change", stateJSON, password, changed)
	if out := cli.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Errorf("the plan after applying the changed password is not empty:\n%s", out)
	}
	assertNoPasswordForm(t, "the provider's trace log", cli.providerLog(), password, changed)
}

// A short sensitive value (a user name "app" in set_sensitive) also occurs in text that is not
// data, such as the group of Deployment.apps: keys of `manifests` keep kind and group as
// they are, the value is hidden where the chart puts it, and the plan after the apply is empty.
func TestAccRelease_shortSensitiveValueKeepsKeys(t *testing.T) {
	e := testAccRelease(t)
	const address = "gitlabk8s_release.web"
	config := "\nprovider \"gitlabk8s\" {}\n" + releaseConfig("web", e.namespace, chartserver.FixtureChart("secret-forms"), `  set_sensitive = {
    "db.user"     = "app"
    "db.password" = "Sh0rt-user-pass"
  }`)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(address, tfjsonpathManifest("Deployment.apps/web-forms"), knownStringContaining("apiVersion: apps/v1")),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
		}},
	})
}
