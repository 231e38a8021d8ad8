package provider

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// editDeployment changes the live Deployment web as `kubectl edit` would.
func (e *releaseTestEnv) editDeployment(t *testing.T, image, mode string) {
	t.Helper()
	ctx := context.Background()
	d, err := e.kube.AppsV1().Deployments(e.namespace).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := &d.Spec.Template.Spec.Containers[0]
	c.Image = image
	for i := range c.Env {
		if c.Env[i].Name == "MODE" {
			c.Env[i].Value = mode
		}
	}
	if _, err := e.kube.AppsV1().Deployments(e.namespace).Update(ctx, d, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
}

// scaleDeployment sets the replicas of web through the scale subresource, as manager.
func (e *releaseTestEnv) scaleDeployment(t *testing.T, replicas int32, manager string) {
	t.Helper()
	ctx := context.Background()
	// The Deployment's controller writes its status meanwhile: read and write again on a conflict.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		scale, err := e.kube.AppsV1().Deployments(e.namespace).GetScale(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		scale.Spec = autoscalingv1.ScaleSpec{Replicas: replicas}
		_, err = e.kube.AppsV1().Deployments(e.namespace).UpdateScale(ctx, "web", scale, metav1.UpdateOptions{FieldManager: manager})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (e *releaseTestEnv) checkDeployment(image string, replicas int32) resource.TestCheckFunc {
	return func(*terraform.State) error {
		d, err := e.kube.AppsV1().Deployments(e.namespace).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := d.Spec.Template.Spec.Containers[0].Image; got != image {
			return fmt.Errorf("deployment image = %s, want %s", got, image)
		}
		if got := *d.Spec.Replicas; got != replicas {
			return fmt.Errorf("deployment replicas = %d, want %d", got, replicas)
		}
		return nil
	}
}

func TestAccRelease_driftIsShownAndRepaired(t *testing.T) {
	e := testAccRelease(t)
	config := e.webRelease(`  set = { "env.MODE" = "review" }`)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			{
				// kubectl edit of the image and an env var, and a deleted ConfigMap.
				PreConfig: func() {
					e.editDeployment(t, "registry.example/web:hacked", "debug")
					if err := e.kube.CoreV1().ConfigMaps(e.namespace).Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(webAddress, plancheck.ResourceActionUpdate),
					expectManifestChanges(webAddress, map[string]*manifestLines{
						"Deployment.apps/web": {
							removed: []string{"value: debug", "image: registry.example/web:hacked"},
							added:   []string{"value: review", "image: registry.example/web:1.25.0"},
						},
						"ConfigMap/web": nil,
					}),
				}},
				// Restored by the provider's server-side apply, which forces the conflicts.
				Check: resource.ComposeAggregateTestCheckFunc(e.checkDeployment("registry.example/web:1.25.0", 1), e.checkAppliedServerSide(t)),
			},
			{
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// An autoscaler owns the replicas it sets: not drift.
				PreConfig:        func() { e.scaleDeployment(t, 3, "kube-controller-manager") },
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// kubectl scale is drift, repaired by the apply.
				PreConfig: func() { e.scaleDeployment(t, 2, "kubectl") },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectManifestChanges(webAddress, map[string]*manifestLines{
						"Deployment.apps/web": {removed: []string{"replicas: 2"}, added: []string{"replicas: 1"}},
					}),
				}},
				Check: e.checkDeployment("registry.example/web:1.25.0", 1),
			},
			{
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

func TestAccRelease_crashLoopFailsFastAndRollsBack(t *testing.T) {
	e := testAccRelease(t)
	good := e.webRelease(`  timeout = "5m"`)
	crashing := e.webRelease(`
  timeout = "5m"
  set     = { fail = "CrashLoopBackOff", "image.tag" = "1.26.0" }
`)
	var started time.Time
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: good},
			{
				PreConfig:   func() { started = time.Now() },
				Config:      crashing,
				ExpectError: wrappedText("Unable to Upgrade Release", "Deployment.apps/web: CrashLoopBackOff: pod web-", "the release was rolled back to revision 1 because atomic is set"),
			},
			{
				PreConfig: func() {
					// The step above includes refresh, plan and the rollback's own wait.
					if elapsed := time.Since(started); elapsed > 90*time.Second {
						t.Errorf("the failing apply took %s with a 5m timeout; it must fail within seconds of the crash loop", elapsed)
					}
					if got := e.helmRevisions(t, "web"); !sameElements(got, []string{"1:superseded", "2:failed", "3:deployed"}) {
						t.Errorf("helm history = %v, want 1 superseded, 2 failed, 3 deployed (the rollback)", got)
					}
				},
				Config:           good,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(3)),
				},
				Check: e.checkDeployment("registry.example/web:1.25.0", 1),
			},
		},
	})
}

func TestAccRelease_failedInstallIsUninstalled(t *testing.T) {
	e := testAccRelease(t)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      e.webRelease(`  set = { fail = "ImagePullBackOff" }`),
				ExpectError: wrappedText("Unable to Install Release", "Deployment.apps/web: ImagePullBackOff: pod web-", "the release was uninstalled because atomic is set"),
			},
			{
				// Nothing is left that would make the next install fail with "cannot re-use a name".
				PreConfig: func() {
					if got := e.helmRevisions(t, "web"); len(got) != 0 {
						t.Errorf("helm history after the failed atomic install = %v, want none", got)
					}
				},
				Config: e.webRelease(""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("status"), knownvalue.StringExact("deployed")),
				},
			},
		},
	})
}

// Without atomic, a failed first install stays as a failed release; the next apply upgrades it
// instead of failing with "cannot re-use a name that is still in use".
func TestAccRelease_failedInstallWithoutAtomicIsContinued(t *testing.T) {
	e := testAccRelease(t)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      e.webRelease("  atomic = false\n  set = { fail = \"CrashLoopBackOff\" }"),
				ExpectError: wrappedText("Unable to Install Release", "Deployment.apps/web: CrashLoopBackOff"),
			},
			{
				PreConfig: func() {
					if got := e.helmRevisions(t, "web"); !slices.Equal(got, []string{"1:failed"}) {
						t.Errorf("helm history after the failed install = %v, want [1:failed]", got)
					}
				},
				Config: e.webRelease("  atomic = false"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("status"), knownvalue.StringExact("deployed")),
				},
			},
		},
	})
}

// A wait that runs out of time says what was not ready.
func TestAccRelease_timeoutNamesWhatIsNotReady(t *testing.T) {
	e := testAccRelease(t)
	chartDir := writeStuckChart(t)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: e.chartRelease("app", chartDir, `  timeout   = "5s"
  set       = { stuck = true }`),
			ExpectError: wrappedText("Unable to Install Release", "not ready after 5s: Service/app-lb ready 0/1 (InProgress; LoadBalancerPending: no load balancer address yet",
				"the release was uninstalled because atomic is set"),
		}},
	})
}

// writeEmptyMapsChart writes a chart whose objects leave their annotations empty, the way
// many public charts' templates do: `annotations: {}`, or `annotations:` followed by a
// condition that renders nothing.
func writeEmptyMapsChart(t *testing.T) string {
	return writeChart(t, "emptymaps", map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: emptymaps\nversion: 0.1.0\n",
		"values.yaml": "annotations: {}\n",
		"templates/services.yaml": `apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-empty
  annotations: {}
spec:
  selector: {app: {{ .Release.Name }}}
  ports: [{name: http, port: 80}]
---
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-null
  annotations:
  {{- with .Values.annotations }}
    {{- toYaml . | nindent 4 }}
  {{- end }}
  labels: {}
spec:
  clusterIP: None
  selector: {app: {{ .Release.Name }}}
  ports: [{name: http, port: 80}]
`,
		// Cluster-scoped, so named after the namespace; it matches no namespace, and failures
		// are ignored, so it never affects anything else on the cluster.
		"templates/webhook.yaml": `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: {{ .Release.Namespace }}-admission
  annotations:
  {{- with .Values.annotations }}
    {{- toYaml . | nindent 4 }}
  {{- end }}
webhooks:
- name: validate.{{ .Release.Namespace }}.gitlabk8s.test
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  namespaceSelector: {matchLabels: {gitlabk8s.test/never: matches}}
  clientConfig:
    service: {name: {{ .Release.Name }}-empty, namespace: {{ .Release.Namespace }}, path: /validate}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
`,
	})
}

// Objects whose chart leaves annotations empty get Helm's ownership annotations, and others
// add their own: neither is drift, so the plan after the apply is empty.
func TestAccRelease_emptyAnnotationsNeverShowAsDrift(t *testing.T) {
	e := testAccRelease(t)
	config := e.chartRelease("maps", writeEmptyMapsChart(t), "")
	annotate := func() {
		svc, err := e.kube.CoreV1().Services(e.namespace).Get(context.Background(), "maps-null", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svc.Annotations["cloud.example/load-balancer"] = "internal"
		svc.Labels = map[string]string{"team": "data"}
		if _, err := e.kube.CoreV1().Services(e.namespace).Update(context.Background(), svc, metav1.UpdateOptions{FieldManager: "cloud-controller"}); err != nil {
			t.Fatal(err)
		}
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(*terraform.State) error {
					svc, err := e.kube.CoreV1().Services(e.namespace).Get(context.Background(), "maps-empty", metav1.GetOptions{})
					if err != nil {
						return err
					}
					if svc.Annotations["meta.helm.sh/release-name"] != "maps" {
						return fmt.Errorf("Service maps-empty has annotations %v, want Helm's ownership annotations", svc.Annotations)
					}
					return nil
				},
			},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{
				PreConfig:        annotate,
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// bothInAnyOrder matches text that a and b both match, in either order.
func bothInAnyOrder(a, b *regexp.Regexp) *regexp.Regexp {
	x, y := strings.TrimPrefix(a.String(), "(?s)"), strings.TrimPrefix(b.String(), "(?s)")
	return regexp.MustCompile(`(?s)(` + x + `.*` + y + `|` + y + `.*` + x + `)`)
}

// setImage changes the image of the live Deployment web as the field manager manager.
func (e *releaseTestEnv) setImage(t *testing.T, image, manager string) {
	t.Helper()
	ctx := context.Background()
	// The Deployment's controller writes its status meanwhile: read and write again on a conflict.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := e.kube.AppsV1().Deployments(e.namespace).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Template.Spec.Containers[0].Image = image
		_, err = e.kube.AppsV1().Deployments(e.namespace).Update(ctx, d, metav1.UpdateOptions{FieldManager: manager})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// No manager is trusted by its name: a change by a tool called image-controller is drift
// until ignore_differences names it, and naming it takes effect in that same plan, without
// an upgrade that would revert the change.
func TestAccRelease_ignoreDifferences(t *testing.T) {
	e := testAccRelease(t)
	config := e.webRelease(`  set = { "env.MODE" = "review" }`)
	ignoring := e.webRelease(`
  set = { "env.MODE" = "review" }
  ignore_differences = [{ kind = "Deployment", managers = ["image-controller"] }]
`)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: e.webRelease(`  ignore_differences = [{ kind = "Deployment" }, { json_pointers = ["spec/replicas"] }]`),
				// Terraform orders the two errors by where they are in the configuration.
				ExpectError: bothInAnyOrder(
					wrappedText("ignore_differences[0] cannot be used: the rule ignores nothing: give json_pointers, managers or both"),
					wrappedText(`ignore_differences[1].json_pointers[0] cannot be used: a JSON pointer starts with "/"`)),
				PlanOnly: true,
			},
			{Config: config},
			{
				PreConfig: func() { e.setImage(t, "registry.example/web:patched", "image-controller") },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectManifestChanges(webAddress, map[string]*manifestLines{
						"Deployment.apps/web": {removed: []string{"image: registry.example/web:patched"}, added: []string{"image: registry.example/web:1.25.0"}},
					}),
				}},
				Check: e.checkDeployment("registry.example/web:1.25.0", 1),
			},
			{
				PreConfig: func() { e.setImage(t, "registry.example/web:patched", "image-controller") },
				Config:    ignoring,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(webAddress, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
				}},
				// Recorded, not upgraded: the change stays.
				Check: e.checkDeployment("registry.example/web:patched", 1),
			},
			{
				Config:           ignoring,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// Another manager's change still shows.
				PreConfig: func() { e.setImage(t, "registry.example/web:edited", "kubectl-edit") },
				Config:    ignoring,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectManifestChanges(webAddress, map[string]*manifestLines{
						"Deployment.apps/web": {removed: []string{"image: registry.example/web:edited"}, added: []string{"image: registry.example/web:1.25.0"}},
					}),
				}},
				Check: e.checkDeployment("registry.example/web:1.25.0", 1),
			},
		},
	})
}
