package provider

import (
	"fmt"
	"math/rand/v2"
	"testing"

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
	e.passwordNeverShows(t, valuesSensitiveConfig, password, changed, `"ConfigMap/web-forms"`, `dsn: (sensitive value`, `"Secret/web-forms"`)
}
