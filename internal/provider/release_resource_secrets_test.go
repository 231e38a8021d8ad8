package provider

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// canaryForms are the ways a sensitive value could leak: as is and base64-encoded.
func canaryForms(canary string) []string {
	return []string{canary, base64.StdEncoding.EncodeToString([]byte(canary)), base64.RawStdEncoding.EncodeToString([]byte(canary))}
}

func assertNoCanary(t *testing.T, where, text, canary string) {
	t.Helper()
	for _, form := range canaryForms(canary) {
		if strings.Contains(text, form) {
			i := strings.Index(text, form)
			t.Errorf("%s contains the sensitive value (as %q) near: %q", where, form, text[max(0, i-120):min(len(text), i+len(form)+40)])
		}
	}
}

func TestAccRelease_sensitiveValuesNeverShow(t *testing.T) {
	forEachCLI(t, sensitiveValuesNeverShow)
}

func sensitiveValuesNeverShow(t *testing.T, bin cliBinary) {
	e := testAccRelease(t)
	canary := fmt.Sprintf("canary-%016x", rand.Uint64())
	cli := newTerraformCLI(t, bin)
	cli.writeConfig("\nprovider \"gitlabk8s\" {}\n" + e.fixtureRelease("web", "web", fmt.Sprintf(`  set_sensitive = {
    secretValue     = %q
    "config.token"  = %q
    "env.API_TOKEN" = %q
  }`, canary, canary, canary)))

	plan := cli.mustRun("plan", "-out=tfplan")
	assertNoCanary(t, "terraform plan output", plan, canary)
	for _, want := range []string{`"ConfigMap/web"`, `token: (sensitive value)`, `password: (sensitive value)`, `name: API_TOKEN`} {
		if !strings.Contains(plan, want) {
			t.Errorf("terraform plan output does not show %q; the manifests must be in the plan:\n%s", want, plan)
		}
	}
	assertNoCanary(t, "terraform show tfplan", cli.mustRun("show", "tfplan"), canary)
	planJSON, n := nonSensitiveValues(t, cli.mustRun("show", "-json", "tfplan"))
	if n == 0 || !strings.Contains(planJSON, "token: (sensitive value)") {
		t.Fatalf("terraform show -json tfplan holds no manifests of the release: %s", planJSON)
	}
	assertNoCanary(t, "non-sensitive attributes in terraform show -json tfplan", planJSON, canary)

	assertNoCanary(t, "terraform apply output", cli.mustRun("apply", "tfplan"), canary)
	stateJSON, n := nonSensitiveValues(t, cli.mustRun("show", "-json"))
	if n == 0 || !strings.Contains(stateJSON, "password: (sensitive value)") {
		t.Fatalf("terraform show -json holds no manifests of the release: %s", stateJSON)
	}
	assertNoCanary(t, "non-sensitive attributes in terraform show -json (state)", stateJSON, canary)

	// The value did reach the cluster, through the Secret and the ConfigMap.
	cm, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || cm.Data["token"] != canary {
		t.Fatalf("ConfigMap web token = %q (err %v); the sensitive value must be applied", cm.Data["token"], err)
	}

	refresh := cli.mustRun("plan", "-detailed-exitcode")
	assertNoCanary(t, "terraform plan output after apply", refresh, canary)
	if !strings.Contains(refresh, "No changes.") {
		t.Errorf("second plan is not empty:\n%s", refresh)
	}
	cli.mustRun("destroy", "-auto-approve")

	log := cli.providerLog()
	if !strings.Contains(log, "rendered release") || !strings.Contains(log, "applying release") {
		t.Fatalf("the provider log holds no provider messages; TF_LOG_PROVIDER=TRACE logging is not captured (%d bytes)", len(log))
	}
	// A CI log shows what the apply waits for, workload by workload.
	if !regexp.MustCompile(`waiting: Deployment\.apps/web ready [01]/1`).MatchString(log) {
		t.Errorf("the provider log does not show the wait's progress (\"waiting: Deployment.apps/web ready x/1\")")
	}
	assertNoCanary(t, "provider log at TRACE", log, canary)
}
