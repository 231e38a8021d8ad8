package provider

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// These tests share releases between the provider and the helm 3 and helm 4 CLIs, as a team
// does that runs helm by hand beside its pipelines. They check what the users see: plans,
// live objects and the CLI's output, whichever apply method either side uses.

// A release the CLI installed is imported, the next plan changes no manifest and upgrades
// nothing, the plan after it is empty, and the provider upgrades the release: the live
// Deployment runs the new image and Helm's history holds both revisions.
func TestAccRelease_helmCLIInstallsAndTheProviderTakesOver(t *testing.T) {
	forEachHelmCLI(t, func(t *testing.T, e *releaseTestEnv, helm func(args ...string) string) {
		helm("install", "web", chartserver.FixtureChart("web"), "--set", "image.tag=1.25.0", "--wait", "--timeout", "2m")
		v1 := e.webRelease(`  set = { "image.tag" = "1.25.0" }`)
		v2 := e.webRelease(`  set = { "image.tag" = "1.26.0" }`)
		testAccResourceTest(t, resource.TestCase{
			ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					Config:             v1,
					ResourceName:       webAddress,
					ImportState:        true,
					ImportStateId:      e.namespace + "/web",
					ImportStatePersist: true,
				},
				{
					// An import cannot read the configuration's own attributes (chart, set), so
					// the first plan writes them; it changes no manifest and upgrades nothing.
					Config: v1,
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply: []plancheck.PlanCheck{
							expectManifestChanges(webAddress, nil),
							plancheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(1)),
						},
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					Check: helmHistoryIs(helm, "web", "1:deployed"),
				},
				{
					Config: v2,
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(webAddress, plancheck.ResourceActionUpdate)},
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
					},
					Check: resource.ComposeAggregateTestCheckFunc(
						e.checkDeployment("registry.example/web:1.26.0", 1),
						helmHistoryIs(helm, "web", "1:superseded", "2:deployed"),
					),
				},
			},
		})
	})
}

// A hotfix made with `helm upgrade --reuse-values --set` shows in the next plan as exactly
// the lines it changed, and the apply puts the configured value back on the live object. A
// `helm rollback` to the hotfix's revision shows and is undone the same way.
func TestAccRelease_helmHotfixAndRollbackShowAsTheirDifference(t *testing.T) {
	forEachHelmCLI(t, func(t *testing.T, e *releaseTestEnv, helm func(args ...string) string) {
		config := e.webRelease(`  set = { "image.tag" = "1.25.0" }`)
		hotfixUndone := resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(webAddress, plancheck.ResourceActionUpdate),
				expectManifestChanges(webAddress, map[string]*manifestLines{
					"ConfigMap/web": {removed: []string{`greeting: hotfix`}, added: []string{`greeting: hello`}},
				}),
			},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		}
		testAccResourceTest(t, resource.TestCase{
			ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{Config: config, Check: e.checkConfigMapData("web", "greeting", "hello")},
				{
					PreConfig: func() {
						helm(append([]string{"upgrade", "web", chartserver.FixtureChart("web"), "--reuse-values", "--set", "config.greeting=hotfix", "--wait"},
							forceConflictsOverSSA(t, helm, "web")...)...)
						if got := e.configMapData(t, "web", "greeting"); got != "hotfix" {
							t.Fatalf("after the hotfix the live ConfigMap web has greeting %q, want hotfix", got)
						}
					},
					Config:            config,
					ConfigPlanChecks:  hotfixUndone,
					ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(3))},
					Check:             e.checkConfigMapData("web", "greeting", "hello"),
				},
				{
					PreConfig: func() {
						helm(append([]string{"rollback", "web", "2", "--wait"}, forceConflictsOverSSA(t, helm, "web")...)...)
						if got := e.configMapData(t, "web", "greeting"); got != "hotfix" {
							t.Fatalf("after the rollback to the hotfix the live ConfigMap web has greeting %q, want hotfix", got)
						}
					},
					Config:            config,
					ConfigPlanChecks:  hotfixUndone,
					ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(5))},
					Check: resource.ComposeAggregateTestCheckFunc(
						e.checkConfigMapData("web", "greeting", "hello"),
						helmHistoryIs(helm, "web", "1:superseded", "2:superseded", "3:superseded", "4:superseded", "5:deployed"),
					),
				},
			},
		})
	})
}

// The CLI reads everything of a release the provider installed and upgraded (helm list,
// history, get values, get manifest, status), and a rollback made with it shows in the next
// plan as exactly its difference, which the apply corrects on the live object.
func TestAccRelease_helmCLIWorksOnTheRelease(t *testing.T) {
	forEachHelmCLI(t, func(t *testing.T, e *releaseTestEnv, helm func(args ...string) string) {
		v1 := e.webRelease(`  set = { "image.tag" = "1.25.0" }`)
		v2 := e.webRelease(`  set = { "image.tag" = "1.26.0" }`)
		testAccResourceTest(t, resource.TestCase{
			ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{Config: v1},
				{
					Config: v2,
					Check: resource.ComposeAggregateTestCheckFunc(
						helmListShows(helm, "web", "2", "deployed", "web-1.0.0"),
						helmHistoryIs(helm, "web", "1:superseded", "2:deployed"),
						helmValuesAre(helm, "web", `{"image":{"tag":"1.26.0"}}`),
						helmManifestIsTheState(helm, e.namespace, "web", webAddress),
						helmStatusShows(helm, "web", 2, "deployed"),
					),
				},
				{
					PreConfig: func() {
						helm(append([]string{"rollback", "web", "1", "--wait"}, forceConflictsOverSSA(t, helm, "web")...)...)
					},
					Config: v2,
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply: []plancheck.PlanCheck{
							expectManifestChanges(webAddress, map[string]*manifestLines{
								"Deployment.apps/web": {removed: []string{"image: registry.example/web:1.25.0"}, added: []string{"image: registry.example/web:1.26.0"}},
							}),
						},
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(4)),
					},
					Check: resource.ComposeAggregateTestCheckFunc(
						e.checkDeployment("registry.example/web:1.26.0", 1),
						helmHistoryIs(helm, "web", "1:superseded", "2:superseded", "3:superseded", "4:deployed"),
					),
				},
			},
		})
	})
}

// forceConflictsOverSSA returns --force-conflicts when the release's last revision was
// applied server-side (helm 4's `get metadata` says so): the provider's field manager then
// owns the fields the hotfix changes, and helm 4 refuses to take them without the flag,
// while it refuses the flag for a client-side apply. Helm 3 knows neither.
func forceConflictsOverSSA(t *testing.T, helm func(args ...string) string, release string) []string {
	t.Helper()
	if !strings.HasPrefix(strings.TrimSpace(helm("version", "--short")), "v4.") {
		return nil
	}
	var metadata struct {
		ApplyMethod string `json:"applyMethod"`
	}
	if err := json.Unmarshal([]byte(helm("get", "metadata", release, "--output", "json")), &metadata); err != nil {
		t.Fatalf("helm get metadata %s: %v", release, err)
	}
	if metadata.ApplyMethod == "ssa" {
		return []string{"--force-conflicts"}
	}
	return nil
}

// helmHistoryIs checks that `helm history` lists exactly the revisions given, as
// "<revision>:<status>", oldest first.
func helmHistoryIs(helm func(args ...string) string, release string, want ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		var history []struct {
			Revision int    `json:"revision"`
			Status   string `json:"status"`
		}
		out := helm("history", release, "--output", "json")
		if err := json.Unmarshal([]byte(out), &history); err != nil {
			return fmt.Errorf("helm history %s: %w\n%s", release, err, out)
		}
		var got []string
		for _, h := range history {
			got = append(got, fmt.Sprintf("%d:%s", h.Revision, h.Status))
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("helm history %s = %v, want %v", release, got, want)
		}
		return nil
	}
}

// helmListShows checks that `helm list` shows the release alone, at the revision, status and
// chart given.
func helmListShows(helm func(args ...string) string, release, revision, status, chart string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		var list []struct {
			Name     string `json:"name"`
			Revision string `json:"revision"`
			Status   string `json:"status"`
			Chart    string `json:"chart"`
		}
		out := helm("list", "--output", "json")
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			return fmt.Errorf("helm list: %w\n%s", err, out)
		}
		if len(list) != 1 || list[0].Name != release || list[0].Revision != revision || list[0].Status != status || list[0].Chart != chart {
			return fmt.Errorf("helm list = %+v, want only %s at revision %s, %s, chart %s", list, release, revision, status, chart)
		}
		return nil
	}
}

// helmValuesAre checks that `helm get values` returns the values the release was given, as
// JSON.
func helmValuesAre(helm func(args ...string) string, release, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		out := helm("get", "values", release, "--output", "json")
		if equal, err := manifest.YAMLEqual(out, want); err != nil || !equal {
			return fmt.Errorf("helm get values %s = %s, want %s (%v)", release, out, want, err)
		}
		return nil
	}
}

// helmStatusShows checks that `helm status` reports the revision and status given.
func helmStatusShows(helm func(args ...string) string, release string, revision int, status string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		var got struct {
			Name    string `json:"name"`
			Version int    `json:"version"`
			Info    struct {
				Status string `json:"status"`
			} `json:"info"`
		}
		out := helm("status", release, "--output", "json")
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			return fmt.Errorf("helm status %s: %w\n%s", release, err, out)
		}
		if got.Name != release || got.Version != revision || got.Info.Status != status {
			return fmt.Errorf("helm status %s = %s revision %d %s, want revision %d %s", release, got.Name, got.Version, got.Info.Status, revision, status)
		}
		return nil
	}
}

// helmManifestIsTheState checks that `helm get manifest` holds the objects of the state's
// manifests, and that each object without a hidden value is, normalized, its manifest.
func helmManifestIsTheState(helm func(args ...string) string, namespace, release, address string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		objs, err := manifest.SplitDocuments(helm("get", "manifest", release))
		if err != nil {
			return fmt.Errorf("helm get manifest %s: %w", release, err)
		}
		got, err := manifest.Manifests(objs, namespace, manifest.BuiltinIsNamespaced)
		if err != nil {
			return fmt.Errorf("helm get manifest %s: %w", release, err)
		}
		state := stateManifestsOf(s, address)
		if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(state))) {
			return fmt.Errorf("helm get manifest %s holds %v, the state %v", release, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(state)))
		}
		compared := 0
		for key, shown := range state {
			if strings.Contains(shown, "(sensitive value") {
				continue
			}
			compared++
			if got[key] != shown {
				return fmt.Errorf("helm get manifest %s: %s is\n%s\nthe state's\n%s", release, key, got[key], shown)
			}
		}
		if compared == 0 {
			return fmt.Errorf("every manifest of %s hides a value: nothing to compare with helm get manifest", address)
		}
		return nil
	}
}

// stateManifestsOf returns the manifests attribute of address in the state.
func stateManifestsOf(s *terraform.State, address string) map[string]string {
	out := map[string]string{}
	rs, ok := s.RootModule().Resources[address]
	if !ok {
		return out
	}
	for k, v := range rs.Primary.Attributes {
		if key, ok := strings.CutPrefix(k, "manifests."); ok && key != "%" {
			out[key] = v
		}
	}
	return out
}

// configMapData returns one key of a live ConfigMap of the test's namespace.
func (e *releaseTestEnv) configMapData(t *testing.T, name, key string) string {
	t.Helper()
	cm, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ConfigMap %s: %v", name, err)
	}
	return cm.Data[key]
}
