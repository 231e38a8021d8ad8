package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

// Every bad input is refused by the plan, with a diagnostic that says what is wrong and
// where, and nothing reaches the cluster.
func TestAccRelease_badInputsFailThePlan(t *testing.T) {
	e := testAccRelease(t)
	release := func(name, chart, body string) string {
		return fmt.Sprintf(`
resource "gitlabk8s_release" "bad" {
  name      = %q
  namespace = %q
  chart     = %q
%s
}
`, name, e.namespace, chart, body)
	}
	web := chartserver.FixtureChart("web")
	tests := []struct {
		name   string
		config string
		want   *regexp.Regexp
	}{
		{
			name:   "missing chart",
			config: release("bad", "/nonexistent/charts/web", ""),
			want:   wrappedText("Unable to Load Chart", `chart "/nonexistent/charts/web" not found`),
		},
		{
			name:   "template error",
			config: release("bad", chartserver.FixtureChart("broken"), ""),
			want:   wrappedText("Unable to Render Chart", "broken/templates/configmap.yaml:6"),
		},
		{
			name:   "invalid YAML in values",
			config: release("bad", web, "  values = [\"replicaCount: 1\\nimage:\\n  tag: [1.2\\n\"]"),
			want:   wrappedText("Invalid YAML", "values[0]", "line 3"),
		},
		{
			name:   "invalid YAML in values_sensitive",
			config: release("bad", web, "  values_sensitive = [\"secretValue: [unclosed\\n\"]"),
			want:   wrappedText("Invalid YAML", "values_sensitive[0]", "line 1"),
		},
		{
			name:   "set path that does not parse",
			config: release("bad", web, `  set = { "image..tag" = "1.2" }`),
			want:   wrappedText("Invalid Values", `set["image..tag"]`),
		},
		{
			name:   "chart version that does not exist",
			config: release("bad", web, `  version = "9.9.9"`),
			want:   wrappedText("Unable to Load Chart", "9.9.9"),
		},
		{
			name:   "cascade that Helm does not know",
			config: release("bad", web, `  cascade = "sideways"`),
			want:   wrappedText("Invalid Attribute Value Match", "cascade", `"background"`, `"foreground"`, `"orphan"`, `got: "sideways"`),
		},
		{
			name:   "name longer than Helm allows",
			config: release(strings.Repeat("a", 54), web, ""),
			want:   wrappedText("Invalid Release Name", "54 characters long; Helm allows at most 53"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testAccResourceTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      tt.config,
					PlanOnly:    true,
					ExpectError: tt.want,
				}},
			})
			if got := e.helmRevisions(t, "bad"); len(got) != 0 {
				t.Errorf("a refused plan left a release: %v", got)
			}
		})
	}
}

// A review app's environment and release planned together for the first time: every object
// of the release is in the very first plan.
func TestAccRelease_firstPlanWithEnvironmentShowsEveryObject(t *testing.T) {
	testAccCluster(t)
	config := fmt.Sprintf(`
provider "gitlabk8s" {
  gitlab = {
    project_id        = "42"
    project_path_slug = "group-app"
  }
}

resource "gitlabk8s_environment" "review" {
  name = "review/first-plan"
}

resource "gitlabk8s_release" "web" {
  name      = "web"
  namespace = gitlabk8s_environment.review.namespace
  chart     = %q
  set       = { "image.tag" = "1.26.0" }
}
`, chartserver.FixtureChart("web"))
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(webAddress, tfjsonpathManifest("Deployment.apps/web"), knownStringContaining("image: registry.example/web:1.26.0")),
				plancheck.ExpectKnownValue(webAddress, tfjsonpathManifest("ConfigMap/web"), knownStringContaining("greeting: hello")),
				plancheck.ExpectKnownValue(webAddress, tfjsonpathManifest("Service/web"), knownStringContaining("port: 80")),
				plancheck.ExpectKnownValue(webAddress, tfjsonpathManifest("Secret/web"), knownStringContaining("password: (sensitive value)")),
			}},
		}},
	})
}
