package provider

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

func failingFormsConfig(namespace, name, password, planChecks, set string) string {
	return fmt.Sprintf(`
provider "gitlabk8s" {}

resource "gitlabk8s_release" "web" {
  name        = %q
  namespace   = %q
  chart       = %q
  wait        = false
  plan_checks = %q
  set         = { %s }
  set_sensitive = {
    "db.password"    = %q
    "admin.password" = "Adm1n&error-log"
  }
}
`, name, namespace, chartserver.FixtureChart("secret-forms"), planChecks, set, password)
}

// TestAccRelease_errorsAndTraceLogsShowNoFormOfASecret runs, with the provider's log at
// TRACE, a plan whose template fails with a message quoting the password as is and
// upper-cased, a plan whose server-side dry run the API server refuses, and an apply the API
// server refuses, quoting labels that hold the password upper-cased, base64-encoded,
// URL-escaped and in JSON; neither the CLI's output nor the provider's log may show any form
// of the password. It runs with terraform and with tofu.
func TestAccRelease_errorsAndTraceLogsShowNoFormOfASecret(t *testing.T) {
	forEachCLI(t, func(t *testing.T, bin cliBinary) {
		e := testAccRelease(t)
		// 26 characters: its base64 ends in padding, which no label value may hold.
		password := fmt.Sprintf(`Err&Log p/ss+w%%rd#%08x`, rand.Uint32())
		cli := newTerraformCLI(t, bin)
		expectFailure := func(what, want string, args ...string) string {
			t.Helper()
			out, err := cli.run(args...)
			if err == nil {
				t.Fatalf("%s succeeded; it must fail:\n%s", what, out)
			}
			if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
				t.Errorf("%s does not fail with %q:\n%s", what, want, out)
			}
			assertNoPasswordForm(t, what+": the output of "+bin.name, out, password)
			return out
		}

		cli.writeConfig(failingFormsConfig(e.namespace, "web", password, planChecksAll, `failRender = "true"`))
		out := expectFailure("a plan whose template fails", "refusing to render with password", "plan")
		if !strings.Contains(out, "(sensitive value)") {
			t.Errorf("the template's message does not show where the password was:\n%s", out)
		}

		cli.writeConfig(failingFormsConfig(e.namespace, "web", password, planChecksAll, `badLabel = "true"`))
		expectFailure("a plan whose dry run the API server refuses", "Invalid value", "plan")

		cli.writeConfig(failingFormsConfig(e.namespace, "web", password, planChecksNone, `badLabel = "true"`))
		expectFailure("an apply the API server refuses", "Invalid value", "apply", "-auto-approve")

		log := cli.providerLog()
		if !strings.Contains(log, "@level=trace") && !strings.Contains(log, "[TRACE]") {
			t.Fatalf("the provider log holds no trace messages; TF_LOG_PROVIDER=TRACE did not apply:\n%.2000s", log)
		}
		assertNoPasswordForm(t, "the provider's trace log with "+bin.name, log, password)
	})
}
