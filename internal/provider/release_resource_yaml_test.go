package provider

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

// Helm 4 re-serializes what it hands a post-renderer, hooks included (helm#32203). A chart
// whose YAML does not survive that unchanged (a block scalar kept to the end of a document,
// duplicate keys, anchors in a List, each in a hook too) plans and applies as `helm 4 install`
// applies it, which runs no post-renderer: the live ConfigMaps are the same, after the install
// and after an upgrade, and the plan after each apply is empty.
func TestAccRelease_yamlHelm4ReserializesAppliesAsHelm4Install(t *testing.T) {
	helm4 := helmCLIVersions[1].binary(t)
	e := testAccRelease(t)
	oracle := e.otherNamespace(t)
	chartDir := chartserver.FixtureChart("yaml-edges")
	config := func(message string) string {
		return releaseConfig("edges", e.namespace, chartDir, fmt.Sprintf("  set = { message = %q }", message))
	}
	sameAsHelm4 := func(message string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			runHelmIn(t, helm4, e.cluster, oracle, "upgrade", "--install", "--wait", "edges", chartDir, "--set", "message="+message)
			return e.sameConfigMaps(t, oracle, 8)
		}
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:           config("hello"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            sameAsHelm4("hello"),
			},
			{
				Config:           config("changed"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            sameAsHelm4("changed"),
			},
		},
	})
}

// sameConfigMaps compares the ConfigMaps of the test's namespace with those of other: the
// same names, data, labels and annotations (but Helm's meta.helm.sh ones, which name the
// namespace). Each namespace must hold want of them besides the cluster's own.
func (e *releaseTestEnv) sameConfigMaps(t *testing.T, other string, want int) error {
	t.Helper()
	read := func(namespace string) (map[string]any, error) {
		list, err := e.kube.CoreV1().ConfigMaps(namespace).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		out := map[string]any{}
		for _, cm := range list.Items {
			if cm.Name == "kube-root-ca.crt" {
				continue
			}
			annotations := maps.Clone(cm.Annotations)
			maps.DeleteFunc(annotations, func(k, _ string) bool { return strings.HasPrefix(k, "meta.helm.sh/") })
			out[cm.Name] = map[string]any{"data": cm.Data, "labels": cm.Labels, "annotations": annotations}
		}
		return out, nil
	}
	ours, err := read(e.namespace)
	if err != nil {
		return err
	}
	helms, err := read(other)
	if err != nil {
		return err
	}
	if len(ours) != want || len(helms) != want {
		return fmt.Errorf("the provider's namespace holds ConfigMaps %v, helm's %v; want %d each", slices.Sorted(maps.Keys(ours)), slices.Sorted(maps.Keys(helms)), want)
	}
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(helms)) {
		if !reflect.DeepEqual(ours[name], helms[name]) {
			problems = append(problems, fmt.Sprintf("ConfigMap %s: provider %#v\nhelm %#v", name, ours[name], helms[name]))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("the provider's ConfigMaps differ from helm 4's:\n%s", strings.Join(problems, "\n"))
	}
	return nil
}

// A key a template writes with nothing after it where the object holds strings (a ConfigMap's
// data, labels) is planned as the API server keeps it, an empty string, as Helm's install and the
// apply leave it, at install and at an upgrade that takes a value away: each plan after an apply
// is empty.
func TestAccRelease_nullStringIsPlannedAsTheAPIServerKeepsIt(t *testing.T) {
	e := testAccRelease(t)
	chartDir := writeChart(t, "nulls", map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: nulls\nversion: 0.1.0\n",
		"values.yaml": "level:\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nulls\n  labels:\n    tier:\n" +
			"data:\n  level: {{ .Values.level }}\n  other: x\n",
	})
	config := func(set string) string { return releaseConfig("nulls", e.namespace, chartDir, set) }
	level := func(want string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			cm, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(t.Context(), "nulls", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if tier, ok := cm.Labels["tier"]; cm.Data["level"] != want || !ok || tier != "" {
				return fmt.Errorf("the ConfigMap holds data %v, labels %v; want level %q and an empty tier", cm.Data, cm.Labels, want)
			}
			return nil
		}
	}
	planned := func(text string) resource.ConfigPlanChecks {
		return resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{plancheck.ExpectKnownValue("gitlabk8s_release.nulls", tfjsonpathManifest("ConfigMap/nulls"),
				knownStringContaining(text))},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		}
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config(""), ConfigPlanChecks: planned("data:\n  level: \"\"\n  other: x\n"), Check: level("")},
			{Config: config(`  set = { level = "debug" }`), ConfigPlanChecks: planned("data:\n  level: debug\n"), Check: level("debug")},
			{Config: config(""), ConfigPlanChecks: planned("data:\n  level: \"\"\n  other: x\n"), Check: level("")},
		},
	})
}
