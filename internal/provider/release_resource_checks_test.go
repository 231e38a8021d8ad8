package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// checksRelease is a release of the checks fixture chart with the given values set.
func checksRelease(namespace, set string) string {
	return releaseConfig("checks", namespace, chartserver.FixtureChart("checks"), "  set       = {"+set+"}")
}

// offlineProvider pins the Kubernetes version, as a merge-request pipeline without cluster
// credentials does.
func offlineProvider(kubeVersion string) string {
	return fmt.Sprintf("provider \"gitlabk8s\" {\n  kube_version = %q\n}\n", kubeVersion)
}

// Without credentials, the plan still refuses removed API versions and invalid fields,
// against the pinned Kubernetes version, naming the object, the field and the template.
func TestRelease_checksWithoutCluster(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	const ns = "review-checks"
	newerThanShipped := fmt.Sprintf("v1.%d.0", validate.LibraryVersion().Minor+1)
	testUnitResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      offlineProvider("v1.30.4") + checksRelease(ns, `"misspelledField" = "true"`),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Invalid Object Fields.*Deployment.apps/checks.*checks/templates/deployment.yaml.*\.spec\.template\.spec\.contianers: field not declared in schema`),
			},
			{
				Config:      offlineProvider("v1.30.4") + checksRelease(ns, `"replicasAsText" = "true"`),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Invalid Object Fields.*\.spec\.replicas: expected numeric`),
			},
			{
				Config:   offlineProvider("v1.30.4") + checksRelease(ns, `"legacyPodDisruptionBudget" = "true"`),
				PlanOnly: true,
				ExpectError: wrappedPattern(`(?s)API Version Not Served.*PodDisruptionBudget.policy/checks.*policy/v1beta1.*` +
					`checks/templates/pdb.yaml.*removed in Kubernetes 1.25.*Kubernetes 1.30.*Use policy/v1 PodDisruptionBudget`),
			},
			{
				Config:      offlineProvider("v1.30.4") + checksRelease(ns, `"gadget" = "true", "gadgetSizeAsText" = "true"`),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Invalid Object Fields.*Gadget.checks.gitlabk8s.io/checks.*\.spec\.size: Invalid value.*must be of type integer`),
			},
			{
				// A custom resource's metadata is checked as the API server checks it.
				Config:      offlineProvider("v1.30.4") + checksRelease(ns, `"gadget" = "true", "gadgetLabelsMisspelled" = "true"`),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Invalid Object Fields.*Gadget.checks.gitlabk8s.io/checks.*\.metadata\.lables: field not declared in schema`),
			},
			{
				// A key the template leaves empty is a null, which a server-side apply refuses:
				// the diagnostic says so and names the ways out.
				Config:   offlineProvider("v1.30.4") + checksRelease(ns, `"gadget" = "true", "gadgetEmptyKey" = "true"`),
				PlanOnly: true,
				ExpectError: wrappedPattern(`(?s)Invalid Object Fields.*Gadget.checks.gitlabk8s.io/checks.*\.spec\.tuning: Invalid value: "null".*` +
					`A field that is "null" is a key the template writes with nothing after it.*take the key out with patches`),
			},
			{
				// Given a value, the key is an object and the Gadget passes.
				Config:             offlineProvider("v1.30.4") + checksRelease(ns, `"gadget" = "true", "gadgetEmptyKey" = "true", "gadgetTuning.level" = "2"`),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				// Another field's mistake does not get the null's advice.
				Config:      offlineProvider("v1.30.4") + checksRelease(ns, `"gadget" = "true", "gadgetSizeAsText" = "true"`),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Fix the template or the values that produce these fields\.\s*$`),
			},
			{
				// plan_checks = "none" is the way out for a chart the checks wrongly refuse.
				Config: strings.Replace(offlineProvider("v1.30.4")+checksRelease(ns, `"misspelledField" = "true"`),
					"  set ", "  plan_checks = \"none\"\n  set ", 1),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				// A target newer than the shipped schema may have added a field the schema does not
				// know: a warning, and the plan goes on.
				Config:             offlineProvider(newerThanShipped) + checksRelease(ns, `"misspelledField" = "true"`),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				// A value of the wrong type is refused whatever the version.
				Config:      offlineProvider(newerThanShipped) + checksRelease(ns, `"replicasAsText" = "true"`),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Invalid Object Fields.*the schema of Kubernetes 1\.\d+ the provider ships.*\.spec\.replicas: expected numeric`),
			},
			{
				// Deprecated but served by the pinned version: a warning, and the plan goes on. The
				// Gadget leaves out its required mode, which its definition's default fills in.
				Config:             offlineProvider("v1.23.0") + checksRelease(ns, `"legacyPodDisruptionBudget" = "true", "gadget" = "true"`),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// A deprecated API version warns, naming when it goes away and what replaces it; it never fails the plan.
func TestAddFindingDiagnostic_deprecatedWarns(t *testing.T) {
	m := &releaseModel{Name: types.StringValue("web"), Namespace: types.StringValue("review")}
	lc := validate.Lifecycle{Deprecated: validate.Version{Major: 1, Minor: 21}, Removed: validate.Version{Major: 1, Minor: 25}, Replacement: "policy/v1 PodDisruptionBudget"}
	f := validate.Finding{Problem: validate.DeprecatedAPI, Key: "PodDisruptionBudget.policy/web", Source: "web/templates/pdb.yaml",
		APIVersion: "policy/v1beta1", Kind: "PodDisruptionBudget", Lifecycle: &lc}
	var diags diag.Diagnostics
	addFindingDiagnostic(m, f, validate.Version{Major: 1, Minor: 23}, &diags)
	if diags.HasError() || diags.WarningsCount() != 1 {
		t.Fatalf("want one warning, got %v", diags)
	}
	detail := diags[0].Detail()
	for _, want := range []string{"PodDisruptionBudget.policy/web", "web/templates/pdb.yaml", "deprecated since Kubernetes 1.21 and removed in 1.25", "Use policy/v1 PodDisruptionBudget"} {
		if !strings.Contains(detail, want) {
			t.Errorf("warning lacks %q: %s", want, detail)
		}
	}
}

// The warning about what the plan could not check names the schema the fields were checked
// against, and what the shipped schema misses for a target of another version.
func TestFieldsCheckedAgainst_namesTheSchemaAndWhatItMisses(t *testing.T) {
	shipped := validate.LibraryVersion()
	older := validate.Version{Major: 1, Minor: shipped.Minor - 7}
	newer := validate.Version{Major: 1, Minor: shipped.Minor + 1}
	for _, tt := range []struct {
		target  validate.Version
		cluster bool
		want    []string
		notWant string
	}{
		{target: older, cluster: true, want: []string{"the cluster's own schemas"}, notWant: "ships"},
		{target: shipped, want: []string{"the schema of Kubernetes " + shipped.String() + " the provider ships"}, notWant: "the target is"},
		{target: older, want: []string{"ships", "the target is " + older.String() + ": a field added after " + older.String() + " passes here"}},
		{target: newer, want: []string{"ships", "the target is " + newer.String() + ": a field " + shipped.String() + " does not declare only warns"}},
		{want: []string{"ships"}, notWant: "the target is"},
	} {
		got := fieldsCheckedAgainst(tt.target, tt.cluster)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("fieldsCheckedAgainst(%s, %v) = %q, lacks %q", tt.target, tt.cluster, got, w)
			}
		}
		if tt.notWant != "" && strings.Contains(got, tt.notWant) {
			t.Errorf("fieldsCheckedAgainst(%s, %v) = %q, has %q", tt.target, tt.cluster, got, tt.notWant)
		}
	}
}
