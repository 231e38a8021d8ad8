package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// The URLs of a release's Ingress are known in the plan that adds it, follow its host and TLS,
// and are gone with it.
func TestAccRelease_urlsOfItsIngress(t *testing.T) {
	e := testAccRelease(t)
	host := "web-" + e.namespace + ".apps.example.test"
	withIngress := e.webRelease(`  set = { "ingress.enabled" = "true", "ingress.host" = "` + host + `", "ingress.tls" = "true" }`)
	plainHTTP := e.webRelease(`  set = { "ingress.enabled" = "true", "ingress.host" = "other.example.test" }`)
	urls := tfjsonpath.New("urls")
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: withIngress,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(webAddress, urls, knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("https://" + host + "/")})),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, urls, knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("https://" + host + "/")})),
				},
			},
			{
				// Refreshing the live Ingress gives the same URLs: the plan is empty.
				Config:           withIngress,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: plainHTTP,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(webAddress, urls, knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("http://other.example.test/")})),
				}},
			},
			{
				Config: e.webRelease(""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(webAddress, urls, knownvalue.ListSizeExact(0)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, urls, knownvalue.ListSizeExact(0)),
				},
			},
		},
	})
}
