package provider

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

// rolloutRelease is a release "app" of the rollout chart with a 5 minute timeout; values is a
// YAML document and extra more attributes.
func rolloutRelease(namespace, chartDir, values, extra string) string {
	return releaseConfig("app", namespace, chartDir, fmt.Sprintf(`  timeout   = "5m"
  atomic    = false
  values    = [<<-EOT
%s
EOT
  ]
%s`, values, extra))
}

func TestAccRelease_unschedulablePodIsNamedAndFailsAfterBlockedTimeout(t *testing.T) {
	e := testAccRelease(t)
	chartDir := chartserver.FixtureChart("rollout")
	runFailing(t, rolloutRelease(e.namespace, chartDir, "deployment:\n  resources: {requests: {ephemeral-storage: 100Ti}}", `  blocked_timeout = "5s"`),
		"Unable to Install Release", "blocked_timeout", "Deployment.apps/app: Unschedulable: pod app-", "0/3 nodes are available: 3 Insufficient ephemeral-storage")
}

// Without blocked_timeout the same pod is waited for until timeout, as an autoscaler may add a
// node; the error then names blocked_timeout, which would have failed it sooner.
func TestAccRelease_unschedulablePodAtTheTimeoutNamesBlockedTimeout(t *testing.T) {
	e := testAccRelease(t)
	chartDir := chartserver.FixtureChart("rollout")
	config := releaseConfig("app", e.namespace, chartDir, `  timeout   = "8s"
  atomic    = false
  values    = [<<-EOT
deployment:
  resources: {requests: {ephemeral-storage: 100Ti}}
EOT
  ]`)
	runFailing(t, config, "Unable to Install Release", "Deployment.apps/app waited to the end for a reason that might have cleared by itself (Unschedulable)",
		"set blocked_timeout", "not ready after 8s", "0/3 nodes are available: 3 Insufficient ephemeral-storage")
}

func TestAccRelease_claimOfAMissingClassFails(t *testing.T) {
	e := testAccRelease(t)
	chartDir := chartserver.FixtureChart("rollout")
	class := e.namespace + "-missing"
	runFailing(t, rolloutRelease(e.namespace, chartDir, fmt.Sprintf("claim: {enabled: true, class: %s}", class), ""),
		"Unable to Install Release", "PersistentVolumeClaim/app-data: ProvisioningFailed", fmt.Sprintf(`storageclass.storage.k8s.io "%s" not found`, class))
}

func TestAccRelease_claimWithoutAClassFails(t *testing.T) {
	e := testAccRelease(t)
	chartDir := chartserver.FixtureChart("rollout")
	runFailing(t, rolloutRelease(e.namespace, chartDir, `claim: {enabled: true, class: ""}`, ""),
		"Unable to Install Release", "PersistentVolumeClaim/app-data: FailedBinding", "no persistent volumes available for this claim and no storage class is set")
}

// A provisioner that fails retries; blocked_timeout ends the wait with its message.
func TestAccRelease_provisioningFailedIsNamed(t *testing.T) {
	e := testAccRelease(t)
	chartDir := chartserver.FixtureChart("rollout")
	class := e.namespace + "-broken"
	createStorageClass(t, e, class, "the storage backend is out of space")
	runFailing(t, rolloutRelease(e.namespace, chartDir, fmt.Sprintf("claim: {enabled: true, class: %s}", class), `  blocked_timeout = "5s"`),
		"Unable to Install Release", "PersistentVolumeClaim/app-data: ProvisioningFailed", "the storage backend is out of space")
}

// The default class binds the claim, and the Deployment using it becomes ready.
func TestAccRelease_claimBindsThroughTheDefaultClass(t *testing.T) {
	e := testAccRelease(t)
	chartDir := chartserver.FixtureChart("rollout")
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: rolloutRelease(e.namespace, chartDir, "claim: {enabled: true}\nservice: {type: LoadBalancer}", ""),
			Check: func(*terraform.State) error {
				claim, err := e.kube.CoreV1().PersistentVolumeClaims(e.namespace).Get(context.Background(), "app-data", metav1.GetOptions{})
				if err != nil {
					return err
				}
				if claim.Status.Phase != corev1.ClaimBound {
					return fmt.Errorf("claim app-data is %s after the apply", claim.Status.Phase)
				}
				svc, err := e.kube.CoreV1().Services(e.namespace).Get(context.Background(), "app", metav1.GetOptions{})
				if err != nil {
					return err
				}
				if len(svc.Status.LoadBalancer.Ingress) == 0 {
					return fmt.Errorf("Service app has no address after the apply")
				}
				return nil
			},
		}},
	})
}

// The wait covers LoadBalancer Services, as helm --wait does; one that gets no address is named.
func TestAccRelease_loadBalancerWithoutAnAddressIsNamed(t *testing.T) {
	e := testAccRelease(t)
	chartDir := chartserver.FixtureChart("rollout")
	runFailing(t, rolloutRelease(e.namespace, chartDir, "service: {type: LoadBalancer, loadBalancerClass: gitlabk8s.test/none}", `  blocked_timeout = "5s"`),
		"Unable to Install Release", "Service/app: LoadBalancerPending: no load balancer address yet", "gitlabk8s.test/none")
}

func TestAccRelease_readinessProbeFailureIsNamed(t *testing.T) {
	e := testAccRelease(t)
	chartDir := chartserver.FixtureChart("rollout")
	runFailing(t, rolloutRelease(e.namespace, chartDir, "deployment:\n  podLabels: {gitlabk8s.test/fail: Unready}", `  blocked_timeout = "5s"`),
		"Unable to Install Release", "Deployment.apps/app: Unhealthy: pod app-", "Readiness probe failed: HTTP probe failed with statuscode: 503")
}

func TestAccRelease_failedHookNamesItsPod(t *testing.T) {
	e := testAccRelease(t)
	chartDir := chartserver.FixtureChart("rollout")
	runFailing(t, rolloutRelease(e.namespace, chartDir, "hook:\n  enabled: true\n  podLabels: {gitlabk8s.test/fail: Error}", ""),
		"Unable to Install Release", "hook failed: Job.batch/app-migrate: BackoffLimitExceeded", "pod app-migrate-", "container migrate terminated: Error, exit code 1")
}

func TestAccRelease_limitRangeRefusalFails(t *testing.T) {
	e := testAccRelease(t)
	chartDir := chartserver.FixtureChart("rollout")
	limits := &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "limits"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer,
			Max:  corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("1")},
		}}},
	}
	if _, err := e.kube.CoreV1().LimitRanges(e.namespace).Create(context.Background(), limits, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	runFailing(t, rolloutRelease(e.namespace, chartDir, "deployment:\n  resources: {limits: {cpu: 2}}", ""),
		"Unable to Install Release", "Deployment.apps/app: FailedCreate", "maximum cpu usage per Container is 1, but limit is 2")
}

// The environment's own quota is the common case: a second replica does not fit.
func TestAccRelease_environmentQuotaRefusalFails(t *testing.T) {
	_, name, namespace := envTest(t, "quota")
	chartDir := chartserver.FixtureChart("rollout")
	config := configEnvironment(name, namespace, 1) +
		rolloutRelease(namespace, chartDir, "deployment:\n  replicas: 2\n  resources: {requests: {cpu: 100m}}", "  depends_on = [gitlabk8s_environment.test]")
	runFailing(t, config, "Unable to Install Release", "Deployment.apps/app: FailedCreate", "exceeded quota", "limited: pods=1")
}

// runFailing applies config once and expects it to fail with want, within 90 seconds of a
// 5 minute timeout (the machine may be loaded; the exact times are in make bench).
func runFailing(t *testing.T, config string, want ...string) {
	t.Helper()
	var start time.Time
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig:   func() { start = time.Now() },
			Config:      config,
			ExpectError: wrappedText(want...),
		}},
	})
	if elapsed := time.Since(start); elapsed > failFastLimit {
		t.Errorf("the failing apply took %s, want well under the 5m timeout (at most %s)", elapsed, failFastLimit)
	}
}

const failFastLimit = 90 * time.Second

func createStorageClass(t *testing.T, e *releaseTestEnv, name, failMessage string) {
	t.Helper()
	class := &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: name},
		Provisioner: "gitlabk8s.local/hostpath",
		Parameters:  map[string]string{"fail": failMessage},
	}
	if _, err := e.kube.StorageV1().StorageClasses().Create(context.Background(), class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.kube.StorageV1().StorageClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// An admission webhook that denies the pods fails the apply with the webhook's message. The
// webhook is served by the test on loopback, where the local API server reaches it, and only
// sees the pods of the test's namespace.
func TestAccRelease_webhookDenialFails(t *testing.T) {
	e := testAccRelease(t)
	hook := serveAdmissionWebhook(t, func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "images of registry.example are not signed"}}
	})
	hook.register(t, e, "deny", admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}})
	runFailing(t, rolloutRelease(e.namespace, chartserver.FixtureChart("rollout"), "deployment: {replicas: 1}", ""),
		"Unable to Install Release", "Deployment.apps/app: FailedCreate", `admission webhook "deny.`+e.namespace+`.gitlabk8s.test" denied the request: images of registry.example are not signed`)
}
