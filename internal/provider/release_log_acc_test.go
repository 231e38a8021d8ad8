package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAccRelease_manyObjectsWithSensitiveValues installs and uninstalls a release of 60
// objects with set_sensitive values. Helm deletes them from parallel goroutines, each logging;
// a masked logging context once crashed the provider there with "concurrent map iteration and
// map write". make test runs it with -race (the provider runs in the test process; the list is in
// scripts/test.sh): the race detector fails the test where logging from those goroutines is not
// safe, which a run without it passes.
func TestAccRelease_manyObjectsWithSensitiveValues(t *testing.T) {
	e := testAccRelease(t)
	config := e.fixtureRelease("many", "generated", `  wait      = false
  set       = { count = "60" }
  set_sensitive = {
    secretValue = "many-objects-s3cret&value"
    unused      = "another-s3cret"
  }`)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("gitlabk8s_release.many", tfjsonpath.New("manifests"), knownvalue.MapSizeExact(60)),
				statecheck.ExpectKnownValue("gitlabk8s_release.many", tfjsonpath.New("manifests").AtMapKey("Secret/many-0003"),
					knownStringContaining("password: (sensitive value)")),
			},
		}},
		CheckDestroy: func(*terraform.State) error {
			cms, err := e.kube.CoreV1().ConfigMaps(e.namespace).List(t.Context(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=many"})
			if err != nil {
				return err
			}
			if len(cms.Items) > 0 {
				return fmt.Errorf("%d ConfigMaps of the release remain after destroy", len(cms.Items))
			}
			return nil
		},
	})
}
