package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

// patchedToken is what a patch puts into the chart's Secret; no plan may show it.
const patchedToken = "patched-token-4f9a2c"

// patchableRelease is a gitlabk8s_release "pat" of the patchable chart with patches.
func (e *releaseTestEnv) patchableRelease(patches string) string {
	return releaseConfig("pat", e.namespace, chartserver.FixtureChart("patchable"), "  patches = ["+patches+"]")
}

// The patches a chart lacks values for: a strategic-merge patch adds a node selector, an
// annotation and a container's limits, a JSON 6902 patch changes the replicas, a patch of the
// pre-install hook adds to its data, and one puts a token into the Secret.
var patchableFixes = `
    {
      target = { kind = "Deployment", name = "pat-web" }
      patch  = <<-YAML
        metadata:
          annotations:
            example.test/owner: team-a
        spec:
          template:
            spec:
              nodeSelector:
                type: kwok
              containers:
                - name: web
                  resources:
                    limits:
                      memory: 64Mi
      YAML
    },
    {
      target = { group = "apps", version = "v1", kind = "Deployment", label_selector = "app.kubernetes.io/name=web" }
      patch  = jsonencode([{ op = "replace", path = "/spec/replicas", value = 2 }])
    },
    {
      target = { kind = "ConfigMap", name = ".*-setup" }
      patch  = "{\"data\": {\"patched\": \"yes\"}}"
    },
    {
      target = { kind = "Secret" }
      patch  = "stringData: {token: ` + patchedToken + `}"
    },`

// Patches reach the plan's manifests (the hook's too, and never the Secret's value), the apply
// applies them, and the plan after it is empty.
func TestAccRelease_patchesAreAppliedAsPlanned(t *testing.T) {
	e := testAccRelease(t)
	const address = "gitlabk8s_release.pat"
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: e.patchableRelease(patchableFixes),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(address, tfjsonpathManifest("Deployment.apps/pat-web"), knownvalue.StringRegexp(regexp.MustCompile(
						`(?s)example.test/owner: team-a.*replicas: 2.*name: web\n\s+resources:\n\s+limits:\n\s+memory: 64Mi\n.*nodeSelector:\n\s+type: kwok`))),
					plancheck.ExpectKnownValue(address, tfjsonpathManifest("ConfigMap/pat-setup"), knownStringContaining("patched: \"yes\"")),
					plancheck.ExpectKnownValue(address, tfjsonpathManifest("Secret/pat-creds"), knownStringContaining("token: (sensitive value")),
					expectManifestsWithout(patchedToken),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: e.patchesAreLive(t),
		}},
	})
}

// patchesAreLive checks the live objects of the patchable release hold what patchableFixes put
// there, and what they left alone.
func (e *releaseTestEnv) patchesAreLive(t *testing.T) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := t.Context()
		d, err := e.kube.AppsV1().Deployments(e.namespace).Get(ctx, "pat-web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		spec := d.Spec.Template.Spec
		switch {
		case d.Annotations["example.test/owner"] != "team-a":
			return fmt.Errorf("annotations %v lack the patched owner", d.Annotations)
		case *d.Spec.Replicas != 2:
			return fmt.Errorf("replicas %d, want the patched 2", *d.Spec.Replicas)
		case spec.NodeSelector["type"] != "kwok":
			return fmt.Errorf("node selector %v lacks the patched type", spec.NodeSelector)
		case len(spec.Containers) != 2 || spec.Containers[0].Resources.Limits.Memory().String() != "64Mi" || spec.Containers[1].Image != "registry.example.test/proxy:1.0":
			return fmt.Errorf("containers %+v: want web with the patched limit and proxy as the chart has it", spec.Containers)
		}
		hook, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(ctx, "pat-setup", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if hook.Data["patched"] != "yes" || hook.Data["step"] != "setup" {
			return fmt.Errorf("hook data %v, want the chart's step and the patched key", hook.Data)
		}
		secret, err := e.kube.CoreV1().Secrets(e.namespace).Get(ctx, "pat-creds", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if string(secret.Data["token"]) != patchedToken || string(secret.Data["user"]) != "web" {
			return fmt.Errorf("the live Secret lacks the patched token or the chart's user")
		}
		return nil
	}
}

// A patch that selects nothing fails the plan, naming it; one that does not parse fails
// validation, naming it.
func TestAccRelease_patchesThatCannotApplyFailNamingThem(t *testing.T) {
	e := testAccRelease(t)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: e.patchableRelease(`
    { target = { kind = "Deployment" }, patch = "{metadata: {labels: {a: b}}}" },
    { target = { kind = "StatefulSet", name = "pat-db" }, patch = "{metadata: {labels: {a: b}}}" },`),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Unable to Patch Chart.*patches\[1\].*selects no object`),
			},
			{
				Config: e.patchableRelease(`
    { target = { kind = "Deployment" }, patch = "{metadata: {labels: {a: b}}}" },
    { target = { kind = "Deployment" }, patch = "[{op: replace, path: /spec/missing/field, value: 1}]" },`),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Unable to Patch Chart.*patches\[1\].*Deployment/pat-web.*missing`),
			},
			{
				Config:      e.patchableRelease(`{ target = { group = "apps" }, patch = "{}" },`),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Invalid Patch.*patches\[0\].*kind, name or label_selector`),
			},
			{
				Config:      e.patchableRelease(`{ target = { kind = "Deployment" }, patch = "- {path: /spec}" },`),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Invalid Patch.*patches\[0\].*JSON 6902`),
			},
		},
	})
}

// expectManifestsWithout checks that no manifest of the plan holds s.
func expectManifestsWithout(s string) plancheck.PlanCheck { return manifestsWithout{s} }

type manifestsWithout struct{ s string }

func (c manifestsWithout) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		after, _ := rc.Change.After.(map[string]any)
		if strings.Contains(fmt.Sprint(after["manifests"]), c.s) {
			resp.Error = fmt.Errorf("the planned manifests of %s show %q", rc.Address, c.s)
		}
	}
}

// A patched release adopted with an import block: the import renders the chart Helm recorded
// with the patches it was applied with, so the first plan keeps revision 1 and its manifests
// (no upgrade that would take the patches off and put them back), Helm's history stays at
// one revision, the live objects keep the patches, and the plan after it is empty.
func TestAccRelease_importOfAPatchedReleaseKeepsItsRevision(t *testing.T) {
	e := testAccRelease(t)
	const address = "gitlabk8s_release.pat"
	release := releaseConfig("pat", e.namespace, chartserver.FixtureChart("patchable"),
		"  set = { image = \"registry.example.test/web:1.1\" }\n  patches = ["+patchableFixes+"]")
	forget := fmt.Sprintf("removed {\n  from = %s\n  lifecycle {\n    destroy = false\n  }\n}\n", address)
	adopt := release + fmt.Sprintf("import {\n  to = %s\n  id = \"%s/pat\"\n}\n", address, e.namespace)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: release, Check: e.onlyRevision(t, "pat", "1:deployed")},
			{Config: forget, Check: e.onlyRevision(t, "pat", "1:deployed")},
			{
				Config: adopt,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(address, tfjsonpath.New("revision"), knownvalue.Int64Exact(1)),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(e.onlyRevision(t, "pat", "1:deployed"), e.patchesAreLive(t)),
			},
			{
				Config:           release,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            e.patchesAreLive(t),
			},
		},
	})
}
