package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// writeRevisionChart writes a chart whose ConfigMap records .Release.Revision and
// .Release.IsUpgrade, so the plan must know the revision the apply will write.
func writeRevisionChart(t *testing.T) string {
	return writeChart(t, "revision", map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: revision\nversion: 0.1.0\n",
		"values.yaml": "message: hello\n",
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
  message: {{ .Values.message | quote }}
  revision: {{ .Release.Revision | quote }}
  isUpgrade: {{ .Release.IsUpgrade | quote }}
`,
	})
}

func revisionRelease(namespace, chartDir, message string) string {
	return releaseConfig("rev", namespace, chartDir, fmt.Sprintf("  set       = { message = %q }", message))
}

// leavePending rewrites the stored record of the release's revision as an interrupted run
// leaves it: status pending, nothing else changed.
func (e *releaseTestEnv) leavePending(t *testing.T, name string, revision int, status rcommon.Status) {
	t.Helper()
	secrets := driver.NewSecrets(e.kube.CoreV1().Secrets(e.namespace))
	key := fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, revision)
	stored, err := secrets.Get(key)
	if err != nil {
		t.Fatalf("read revision %d of release %s: %v", revision, name, err)
	}
	rel, ok := stored.(*release.Release)
	if !ok {
		t.Fatalf("revision %d of release %s is a %T", revision, name, stored)
	}
	rel.SetStatus(status, "left "+string(status)+" by the test")
	if err := secrets.Update(key, rel); err != nil {
		t.Fatalf("mark revision %d of release %s %s: %v", revision, name, status, err)
	}
}

func (e *releaseTestEnv) checkConfigMapData(name, key, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		cm, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := cm.Data[key]; got != want {
			return fmt.Errorf("ConfigMap %s has %s=%q, want %q", name, key, got, want)
		}
		return nil
	}
}

// A release left pending-upgrade is recovered by a rollback (a revision of its own) and then
// upgraded: the plan renders the revision the upgrade writes, so a chart that puts
// .Release.Revision into an ordinary object applies.
func TestAccRelease_pendingUpgradeRendersTheRevisionItWrites(t *testing.T) {
	e := testAccRelease(t)
	chartDir := writeRevisionChart(t)
	const address = "gitlabk8s_release.rev"
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: revisionRelease(e.namespace, chartDir, "one")},
			{
				Config: revisionRelease(e.namespace, chartDir, "two"),
				Check:  e.checkConfigMapData("rev", "revision", "2"),
			},
			{
				// Revision 2 is left pending-upgrade, as a killed run leaves it: recovery
				// rolls back to revision 1 (revision 3), then upgrades (revision 4).
				PreConfig: func() { e.leavePending(t, "rev", 2, rcommon.StatusPendingUpgrade) },
				Config:    revisionRelease(e.namespace, chartDir, "two"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(address, tfjsonpath.New("manifests").AtMapKey("ConfigMap/rev"), knownvalue.StringRegexp(regexp.MustCompile(`revision: "4"`))),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(address, tfjsonpath.New("revision"), knownvalue.Int64Exact(4)),
					statecheck.ExpectKnownValue(address, tfjsonpath.New("status"), knownvalue.StringExact("deployed")),
				},
				Check: resource.ComposeTestCheckFunc(
					e.checkConfigMapData("rev", "revision", "4"),
					e.checkConfigMapData("rev", "isUpgrade", "true"),
					func(*terraform.State) error {
						if got := e.helmRevisions(t, "rev"); !sameElements(got, []string{"1:superseded", "2:failed", "3:superseded", "4:deployed"}) {
							return fmt.Errorf("helm history = %v, want 1 superseded, 2 failed, 3 superseded (the rollback), 4 deployed", got)
						}
						return nil
					},
				),
			},
			{
				Config:           revisionRelease(e.namespace, chartDir, "two"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// A pending install is uninstalled and installed afresh: revision 1 again.
				PreConfig: func() { e.leavePending(t, "rev", 4, rcommon.StatusPendingInstall) },
				Config:    revisionRelease(e.namespace, chartDir, "three"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(address, tfjsonpath.New("manifests").AtMapKey("ConfigMap/rev"), knownvalue.StringRegexp(regexp.MustCompile(`revision: "1"`))),
				}},
				Check: resource.ComposeTestCheckFunc(
					e.checkConfigMapData("rev", "revision", "1"),
					e.checkConfigMapData("rev", "isUpgrade", "false"),
				),
			},
		},
	})
}
