package provider

import (
	"context"
	"regexp"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
)

// A validating admission webhook's refusal fails the plan, naming the object, the webhook, its
// message and what to do, and nothing is written to the cluster. A webhook the API server does
// not call on a dry run (it declares side effects) is named once, as not checked, and the plan
// goes on.
func TestAccRelease_dryRunAsksAdmissionWebhooks(t *testing.T) {
	e := testAccRelease(t)
	hook := serveAdmissionWebhook(t, func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "deployments here need a team label"}}
	})
	deployments := admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}
	services := admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"services"}}
	forEachCLI(t, func(t *testing.T, bin cliBinary) {
		cli := newTerraformCLI(t, bin)
		cli.writeConfig(checksApplied(e.namespace, ``))

		hook.register(t, e, "deny", admissionregistrationv1.SideEffectClassNone, deployments)
		waitForAdmission(t, e, "denied the request")
		before := hook.dryRuns()
		out, err := cli.run("plan")
		if err == nil {
			t.Fatalf("the plan did not fail:\n%s", out)
		}
		text := diagnosticText(out)
		for _, want := range []string{"Error: Object Refused by an Admission Webhook", `admission webhook "deny.` + e.namespace + `.gitlabk8s.test" refused`,
			"Deployment.apps/checks (from checks/templates/deployment.yaml)", "deployments here need a team label", "Change the template or the values",
			"Nothing was written to the cluster"} {
			if !strings.Contains(text, want) {
				t.Errorf("plan output lacks %q:\n%s", want, out)
			}
		}
		if hook.dryRuns() == before {
			t.Error("the plan did not send the webhook a dry run")
		}
		if _, err := e.kube.AppsV1().Deployments(e.namespace).Get(context.Background(), "checks", metav1.GetOptions{}); !kube.IsNotFound(err) {
			t.Errorf("the plan wrote the Deployment (get: %v)", err)
		}

		hook.unregister(t, e, "deny")
		hook.registerLegacy(t, e, "audit", admissionregistrationv1.SideEffectClassSome, deployments, services)
		waitForAdmission(t, e, "does not support dry run")
		out = cli.mustRun("plan")
		if n := strings.Count(out, "Warning: Admission Webhooks Not Called by the Plan"); n != 1 {
			t.Fatalf("want one warning about the webhook not called, got %d:\n%s", n, out)
		}
		text = diagnosticText(out)
		for _, want := range []string{`"audit.` + e.namespace + `.gitlabk8s.test":`, "Deployment.apps/checks", "Service/checks", "sideEffects: None or NoneOnDryRun", "Plan: 1 to add"} {
			if !strings.Contains(text, want) {
				t.Errorf("plan output lacks %q:\n%s", want, out)
			}
		}
	})
}

var diagnosticFrame = regexp.MustCompile(`[\s│]+`)
