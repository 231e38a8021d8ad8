package provider

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/e2e"
)

// writeStuckChart writes a chart whose LoadBalancer Service (with stuck=true) names a load
// balancer class no controller serves: it never gets an address, a reason that might still
// clear, so an apply waits until it is interrupted or times out.
func writeStuckChart(t *testing.T) string {
	t.Helper()
	return writeChart(t, "stuck", map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: stuck\nversion: 0.1.0\n",
		"values.yaml": "stuck: false\nmessage: hello\n",
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
  message: {{ .Values.message | quote }}
{{- if .Values.stuck }}
  interrupted: "true"
{{- end }}
`,
		"templates/service.yaml": `{{- if .Values.stuck }}
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-lb
spec:
  type: LoadBalancer
  loadBalancerClass: gitlabk8s.test/none
  ports:
  - port: 80
{{- end }}
`,
	})
}

func stuckReleaseConfig(namespace, chartDir string, stuck bool, message string) string {
	return "\nprovider \"gitlabk8s\" {}\n" + releaseConfig("app", namespace, chartDir, fmt.Sprintf(`  timeout   = "10m"
  set       = { stuck = %t, message = %q }`, stuck, message))
}

// waitForRevision waits until Helm records want ("2:pending-upgrade") for the release app.
func (e *releaseTestEnv) waitForRevision(t *testing.T, want string, output *e2e.SyncBuffer) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !slices.Contains(e.helmRevisions(t, "app"), want) {
		if time.Now().After(deadline) {
			t.Fatalf("release app never reached %s; history %v; terraform output:\n%s", want, e.helmRevisions(t, "app"), output)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// killTerraform kills terraform and its provider plugin with SIGKILL, as a lost CI runner
// would, and waits until both are gone.
func killTerraform(t *testing.T, cmd interface{ Wait() error }, pid int) {
	t.Helper()
	plugins := childPIDs(pid)
	if len(plugins) == 0 {
		t.Fatalf("terraform (pid %d) has no provider process to kill", pid)
	}
	for _, p := range append([]int{pid}, plugins...) {
		if err := syscall.Kill(p, syscall.SIGKILL); err != nil {
			t.Fatalf("kill %d: %v", p, err)
		}
	}
	_ = cmd.Wait()
	for _, p := range plugins {
		for syscall.Kill(p, 0) == nil {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func TestAccRelease_killedApplyIsRecovered(t *testing.T) {
	forEachCLI(t, killedApplyIsRecovered)
}

func killedApplyIsRecovered(t *testing.T, bin cliBinary) {
	e := testAccRelease(t)
	chartDir := writeStuckChart(t)
	cli := newTerraformCLI(t, bin)

	// A first install killed while it waits: the release is left pending-install.
	cli.writeConfig(stuckReleaseConfig(e.namespace, chartDir, true, "hello"))
	cmd, out := cli.start("apply", "-auto-approve")
	e.waitForRevision(t, "1:pending-install", out)
	killTerraform(t, cmd, cmd.Process.Pid)
	if got := e.helmRevisions(t, "app"); !slices.Equal(got, []string{"1:pending-install"}) {
		t.Fatalf("after SIGKILL helm history = %v, want [1:pending-install]", got)
	}

	cli.writeConfig(stuckReleaseConfig(e.namespace, chartDir, false, "hello"))
	applied := cli.mustRun("apply", "-auto-approve")
	if !strings.Contains(applied, "Release Recovered") || !strings.Contains(applied, "pending-install") {
		t.Errorf("the recovering apply does not say it recovered a pending install:\n%s", applied)
	}
	if got := e.helmRevisions(t, "app"); !slices.Equal(got, []string{"1:deployed"}) {
		t.Fatalf("after recovery helm history = %v, want [1:deployed]", got)
	}

	// An upgrade killed while it waits: the release is left pending-upgrade.
	cli.writeConfig(stuckReleaseConfig(e.namespace, chartDir, true, "upgraded"))
	cmd, out = cli.start("apply", "-auto-approve")
	e.waitForRevision(t, "2:pending-upgrade", out)
	killTerraform(t, cmd, cmd.Process.Pid)

	cli.writeConfig(stuckReleaseConfig(e.namespace, chartDir, false, "upgraded"))
	plan := cli.mustRun("plan")
	if !strings.Contains(plan, "Release Left Pending") || !strings.Contains(plan, `"pending-upgrade" -> "deployed"`) {
		t.Errorf("the plan after the kill does not show the pending release being recovered:\n%s", plan)
	}
	applied = cli.mustRun("apply", "-auto-approve")
	if !strings.Contains(applied, "Release Recovered") {
		t.Errorf("the recovering apply does not say it recovered the release:\n%s", applied)
	}
	// Recovery marks the interrupted revision failed and rolls back to revision 1 (revision 3)
	// before upgrading (revision 4).
	if got := e.helmRevisions(t, "app"); !sameElements(got, []string{"1:superseded", "2:failed", "3:superseded", "4:deployed"}) {
		t.Fatalf("after recovery helm history = %v, want 1 superseded, 2 failed (the interrupted one), 3 superseded (the rollback to 1), 4 deployed", got)
	}
	// A field only the interrupted revision added is not left behind either.
	cm, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(t.Context(), "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cm.Data["interrupted"]; ok || cm.Data["message"] != "upgraded" {
		t.Errorf("ConfigMap app after recovery has data %v, want only message=upgraded", cm.Data)
	}
	// The Service only the interrupted revision had created is not left behind.
	if _, err := e.kube.CoreV1().Services(e.namespace).Get(t.Context(), "app-lb", metav1.GetOptions{}); err == nil {
		t.Errorf("Service app-lb of the interrupted revision is still there")
	}
	if plan := cli.mustRun("plan"); !strings.Contains(plan, "No changes.") {
		t.Errorf("plan after recovery is not empty:\n%s", plan)
	}
	cli.mustRun("destroy", "-auto-approve")
}

func TestAccRelease_cancelledApplyIsNotLeftPending(t *testing.T) {
	forEachCLI(t, cancelledApplyIsNotLeftPending)
}

func cancelledApplyIsNotLeftPending(t *testing.T, bin cliBinary) {
	e := testAccRelease(t)
	chartDir := writeStuckChart(t)
	cli := newTerraformCLI(t, bin)

	// SIGTERM to terraform during a first install.
	cli.writeConfig(stuckReleaseConfig(e.namespace, chartDir, true, "hello"))
	cmd, out := cli.start("apply", "-auto-approve")
	e.waitForRevision(t, "1:pending-install", out)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitExit(t, cmd, out)
	if got := e.helmRevisions(t, "app"); !slices.Equal(got, []string{"1:failed"}) {
		t.Fatalf("after SIGTERM helm history = %v, want [1:failed]: a cancelled install must not stay pending\n%s", got, out)
	}
	cli.writeConfig(stuckReleaseConfig(e.namespace, chartDir, false, "hello"))
	cli.mustRun("apply", "-auto-approve")

	// Ctrl-C (SIGINT to the whole process group) during an upgrade.
	cli.writeConfig(stuckReleaseConfig(e.namespace, chartDir, true, "upgraded"))
	cmd, out = cli.start("apply", "-auto-approve")
	e.waitForRevision(t, "3:pending-upgrade", out)
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitExit(t, cmd, out)
	if !strings.Contains(out.String(), "cancelled") {
		t.Errorf("terraform's output does not say the upgrade was cancelled:\n%s", out)
	}
	history := e.helmRevisions(t, "app")
	if !slices.Contains(history, "3:failed") {
		t.Fatalf("after Ctrl-C helm history = %v, want revision 3 failed, not pending\n%s", history, out)
	}
	cli.writeConfig(stuckReleaseConfig(e.namespace, chartDir, false, "upgraded"))
	if applied := cli.mustRun("apply", "-auto-approve"); strings.Contains(applied, "Release Recovered") {
		t.Errorf("the apply after a cancellation needed recovery; the cancelled run must have settled the release:\n%s", applied)
	}
	cli.mustRun("destroy", "-auto-approve")
}

// waitExit waits for terraform to exit after a signal; it must not take long.
func waitExit(t *testing.T, cmd interface{ Wait() error }, out *e2e.SyncBuffer) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("terraform succeeded although it was interrupted:\n%s", out)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("terraform did not stop within 60s of the signal:\n%s", out)
	}
}
