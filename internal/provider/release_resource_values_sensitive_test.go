package provider

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

func valuesSensitiveConfig(namespace, password string) string {
	return fmt.Sprintf(`
provider "gitlabk8s" {}

variable "db_password" {
  type      = string
  sensitive = true
  default   = %q
}

resource "gitlabk8s_release" "web" {
  name      = "web"
  namespace = %q
  chart     = %q
  wait      = false
  values    = [yamlencode({ db = { user = "app", password = "overridden-by-values-sensitive" } })]
  values_sensitive = [yamlencode({
    db    = { password = var.db_password }
    admin = { password = "Adm1n&values-sensitive" }
  })]
}
`, password, namespace, chartserver.FixtureChart("secret-forms"))
}

// TestAccRelease_valuesSensitiveNeverShow passes the password of the secret-forms chart in
// values_sensitive, over a values document that sets it too, and checks that it reaches the
// cluster (values_sensitive wins over values) and that no form of it shows in the plan, the
// plan's and the state's JSON outside sensitive attributes, the apply's output or the provider's
// trace log, through a change of the password.
func TestAccRelease_valuesSensitiveNeverShow(t *testing.T) {
	e := testAccRelease(t)
	suffix := fmt.Sprintf("%08x", rand.Uint32())
	password, changed := `Vals&Sens 1/p+ss%#`+suffix, `Vals&Sens 2/p+ss%#`+suffix
	cli := newTerraformCLI(t, suiteCLI(t))

	cli.writeConfig(valuesSensitiveConfig(e.namespace, password))
	plan := cli.mustRun("plan", "-out=tfplan")
	assertNoPasswordForm(t, "the plan", plan, password)
	if !strings.Contains(plan, "dsn: (sensitive value") || !strings.Contains(plan, `"Secret/web-forms"`) {
		t.Errorf("the plan does not show the manifests with markers:\n%s", plan)
	}
	planJSON, n := nonSensitiveValues(t, cli.mustRun("show", "-json", "tfplan"))
	if n == 0 || !strings.Contains(planJSON, "dsn: (sensitive value") {
		t.Fatalf("terraform show -json tfplan holds no manifests of the release: %s", planJSON)
	}
	assertNoPasswordForm(t, "terraform show -json tfplan", planJSON, password)
	assertNoPasswordForm(t, "terraform apply", cli.mustRun("apply", "tfplan"), password)

	cm, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(t.Context(), "web-forms", metav1.GetOptions{})
	if want := "postgres://app:" + url.QueryEscape(password) + "@db/app"; err != nil || cm.Data["dsn"] != want {
		t.Fatalf("ConfigMap web-forms dsn = %q (err %v), want %q: values_sensitive must reach the cluster, over values", cm.Data["dsn"], err, want)
	}
	if out := cli.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Errorf("the plan after the apply is not empty:\n%s", out)
	}

	cli.writeConfig(valuesSensitiveConfig(e.namespace, changed))
	plan = cli.mustRun("plan", "-out=tfplan")
	assertNoPasswordForm(t, "the plan of the changed password", plan, password, changed)
	if !strings.Contains(plan, "update in-place") || !strings.Contains(plan, `"ConfigMap/web-forms"`) {
		t.Errorf("the plan of a changed password does not show the objects changing:\n%s", plan)
	}
	assertNoPasswordForm(t, "terraform apply of the changed password", cli.mustRun("apply", "tfplan"), password, changed)
	stateJSON, _ := nonSensitiveValues(t, cli.mustRun("show", "-json"))
	assertNoPasswordForm(t, "terraform show -json (state)", stateJSON, password, changed)
	assertNoPasswordForm(t, "the provider's trace log", cli.providerLog(), password, changed)
}
