package provider

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

// testedRelease is a gitlabk8s_release "tst" of the patchable chart with run_tests, its test
// failing when failTest is set.
func (e *releaseTestEnv) testedRelease(image string, failTest, atomic bool) string {
	return releaseConfig("tst", e.namespace, chartserver.FixtureChart("patchable"), fmt.Sprintf(
		"  run_tests = true\n  atomic = %t\n  set = { image = %q, failTest = %t }", atomic, image, failTest))
}

// A passing test lets the apply succeed; its Job is deleted as its hook-succeeded policy says.
func TestAccRelease_runTestsPass(t *testing.T) {
	e := testAccRelease(t)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: e.testedRelease("registry.example.test/web:1.0", false, false),
			Check: resource.ComposeTestCheckFunc(
				resource.TestCheckNoResourceAttr("gitlabk8s_release.tst", "manifests.Job.batch/tst-smoke"),
				func(*terraform.State) error {
					_, err := e.kube.BatchV1().Jobs(e.namespace).Get(t.Context(), "tst-smoke", metav1.GetOptions{})
					if !apierrors.IsNotFound(err) {
						return fmt.Errorf("the passed test's Job is still there (hook-succeeded): %v", err)
					}
					return nil
				}),
		}},
	})
}

// Test hooks that are bare Pods, as podinfo's and many charts' are (zoo-podinfo), end as their
// containers do on a node, and the apply succeeds; Helm leaves the Pods, which no
// hook-delete-policy asks it to delete.
func TestAccRelease_runTestsPassWithTestPods(t *testing.T) {
	e := testAccRelease(t)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: releaseConfig("tst", e.namespace, chartserver.FixtureChart("zoo-podinfo"), "  run_tests = true\n  timeout = \"1m\""),
			Check: func(*terraform.State) error {
				pods, err := e.kube.CoreV1().Pods(e.namespace).List(t.Context(), metav1.ListOptions{})
				if err != nil {
					return err
				}
				succeeded := 0
				for _, pod := range pods.Items {
					if strings.HasPrefix(pod.Name, "tst-test-") || strings.HasPrefix(pod.Name, "tst-jwt-test-") {
						if pod.Status.Phase != corev1.PodSucceeded {
							return fmt.Errorf("test Pod %s is %s, want Succeeded", pod.Name, pod.Status.Phase)
						}
						succeeded++
					}
				}
				if succeeded != 2 {
					return fmt.Errorf("%d test Pods succeeded, want the chart's 2", succeeded)
				}
				return nil
			},
		}},
	})
}

// A failing test fails the apply, naming its Job, its pod and why.
func TestAccRelease_runTestsFailNamingThePod(t *testing.T) {
	e := testAccRelease(t)
	runFailing(t, e.testedRelease("registry.example.test/web:1.0", true, false),
		"Release Test Failed", "Job.batch/tst-smoke", "pod tst-smoke-", "container smoke terminated: Error",
		"log of pod tst-smoke-", "its termination message:", "panic: boom")
}

// A failing test's error carries the end of its pod's log, redacted. The local cluster's node
// (kwok) serves no container logs, so the error says so and gives the message the container
// left when it terminated ("panic: boom"), in which a sensitive value of the release is hidden.
func TestAccRelease_runTestsFailWithTheLogTailRedacted(t *testing.T) {
	e := testAccRelease(t)
	runFailing(t, releaseConfig("tst", e.namespace, chartserver.FixtureChart("patchable"),
		"  run_tests = true\n  set = { failTest = true }\n  set_sensitive = { smokeToken = \"boom\" }"),
		"Release Test Failed", "log of pod tst-smoke-", "container smoke unavailable", "its termination message:", "panic: (sensitive value")
}

// With atomic, a failing test rolls the upgrade back to the revision before it.
func TestAccRelease_runTestsFailAtomicRollsBack(t *testing.T) {
	e := testAccRelease(t)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: e.testedRelease("registry.example.test/web:1.0", false, true)},
			{
				Config:      e.testedRelease("registry.example.test/web:2.0", true, true),
				ExpectError: wrappedText("Release Test Failed", "pod tst-smoke-", "rolled back to revision 1"),
			},
			{
				// The refreshed plan of the first revision's configuration is empty: the live objects are 1.0 again.
				PreConfig: func() {
					d, err := e.kube.AppsV1().Deployments(e.namespace).Get(t.Context(), "tst-web", metav1.GetOptions{})
					if err != nil {
						t.Error(err)
					} else if image := d.Spec.Template.Spec.Containers[0].Image; image != "registry.example.test/web:1.0" {
						t.Errorf("live image %s, want the rolled-back 1.0", image)
					}
				},
				Config:   e.testedRelease("registry.example.test/web:1.0", false, true),
				PlanOnly: true,
			},
		},
	})
}

// With run_tests the plan evaluates the test hooks' pods against the Pod Security level they
// will meet, as it does the release's other pods: a smoke test the level forbids fails the plan
// on run_tests, where the apply installed the release and then failed its test. Without
// run_tests the test never runs, and the release applies.
func TestAccRelease_runTestsRefusedByPodSecurity(t *testing.T) {
	testAccCluster(t)
	namespace := fmt.Sprintf("review-psa-tests-%04x", rand.IntN(1<<16))
	env := strings.Replace(restrictedEnvironment("review/psa-tests", namespace), `"restricted"`, `"baseline"`, 1)
	// The smoke test's pods share the node's network, which baseline forbids; the release's other
	// pods meet it.
	hostNetwork := `jsonencode([{ op = "add", path = "/spec/template/spec/hostNetwork", value = true }])`
	release := func(runTests bool) string {
		return strings.Replace(releaseConfig("tst", namespace, chartserver.FixtureChart("patchable"), fmt.Sprintf(
			"  run_tests = %t\n  patches = [{ target = { kind = \"Job\", name = \".*-smoke\" }, patch = %s }]", runTests, hostNetwork)),
			fmt.Sprintf("namespace = %q", namespace), "namespace = gitlabk8s_environment.review.namespace", 1)
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:   env + release(true),
				PlanOnly: true,
				ExpectError: wrappedPattern(`(?s)Pods Refused by Pod Security.*with gitlabk8s_release.tst.*run_tests.*sets namespace ` + namespace +
					` to enforce the "baseline".*the test hook Job.batch/tst-smoke \(from patchable/templates/tests/smoke.yaml\), which run_tests runs after the apply.*set run_tests = false.*would violate PodSecurity "baseline:latest": host namespaces \(hostNetwork=true\)`),
			},
			{Config: env + release(false)},
		},
	})
}
