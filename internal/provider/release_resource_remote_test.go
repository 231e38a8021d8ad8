package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

// republishedConfigMap is the web chart's ConfigMap template with one more key, published
// again under the same version.
const republishedConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "web.fullname" . }}
  labels:
    {{- include "web.labels" . | nindent 4 }}
data:
  republished: "yes"
  {{- range $key, $value := .Values.config }}
  {{ $key }}: {{ $value | quote }}
  {{- end }}
`

func TestAccRelease_httpRepositoryChart(t *testing.T) {
	e := testAccRelease(t)
	repo := chartserver.NewHTTPRepository(t, chartserver.WithBasicAuth("deployer", "repo-pass-4f2a"))
	digest := repo.PublishFixture(t, "web")
	config := fmt.Sprintf(`
resource "gitlabk8s_release" "web" {
  name                = "web"
  namespace           = %q
  chart               = "web"
  repository          = %q
  repository_username = "deployer"
  repository_password = "repo-pass-4f2a"
  version             = "~1.0.0"
}
`, e.namespace, repo.URL)
	var republished string
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("chart_version"), knownvalue.StringExact("1.0.0")),
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("chart_digest"), knownvalue.StringExact(digest)),
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("status"), knownvalue.StringExact("deployed")),
				},
			},
			{
				// The same version published again with another template shows in the plan.
				PreConfig: func() {
					ch := chartserver.LoadFixture(t, "web")
					chartserver.SetTemplate(ch, "templates/configmap.yaml", republishedConfigMap)
					republished = repo.Publish(t, ch)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(webAddress, plancheck.ResourceActionUpdate),
					expectManifestChanges(webAddress, map[string]*manifestLines{
						"ConfigMap/web": {added: []string{`republished: "yes"`}},
					}),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("chart_digest"), knownvalue.NotNull()),
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
				},
				Check: func(s *terraform.State) error {
					if got := s.RootModule().Resources[webAddress].Primary.Attributes["chart_digest"]; got != republished || got == digest {
						return fmt.Errorf("chart_digest = %s, want the republished package's %s", got, republished)
					}
					return nil
				},
			},
		},
	})
}

func TestAccRelease_ociRegistryChart(t *testing.T) {
	e := testAccRelease(t)
	registry := chartserver.NewOCIRegistry(t, chartserver.WithBasicAuth("deployer", "oci-pass-9c1e"))
	ref, digest := registry.PublishFixture(t, "web")
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			// A registry on loopback is reached over HTTPS too, unless plain_http says otherwise.
			Config:      remoteWebRelease(e.namespace, ref, "  repository_username = \"deployer\"\n  repository_password = \"oci-pass-9c1e\"\n"),
			PlanOnly:    true,
			ExpectError: wrappedText("Registry Speaks Plain HTTP", "answers plain HTTP, not HTTPS", "set plain_http = true"),
		}, {
			Config: fmt.Sprintf(`
resource "gitlabk8s_release" "web" {
  name                = "web"
  namespace           = %q
  chart               = %q
  version             = "1.0.0"
  plain_http          = true
  repository_username = "deployer"
  repository_password = "oci-pass-9c1e"
}
`, e.namespace, ref),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(webAddress, tfjsonpathManifest("Deployment.apps/web"), knownStringContaining("image: registry.example/web:1.25.0")),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("chart_digest"), knownvalue.StringExact(digest)),
				statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("chart_version"), knownvalue.StringExact("1.0.0")),
				statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("status"), knownvalue.StringExact("deployed")),
			},
		}},
	})
}
