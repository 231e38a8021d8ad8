package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/front"
)

// sharedEngineRun runs one CLI's commands in a configuration folder the way a job does, with the
// package from the provider mirror: its front and the engine the front shares, which logs to
// logFile and keeps its socket folder under tmp.
type sharedEngineRun struct {
	t             *testing.T
	h             *harness
	cli           CLI
	dir, tmp, log string
}

func (r *sharedEngineRun) run(ctx context.Context, extraEnv []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, r.cli.Path, args...)
	cmd.Dir = r.dir
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "TF_LOG") || name == front.OptOut || name == "TF_CLI_CONFIG_FILE" || name == "TMPDIR" {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "TF_CLI_CONFIG_FILE="+r.h.cliConfig, "TMPDIR="+r.tmp, front.LogVariable+"="+r.log,
		"KUBECONFIG="+r.h.cluster.Kubeconfig, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	cmd.Env = append(cmd.Env, extraEnv...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// engineLog waits until the command's engine has stopped (it outlives Terraform by a poll), then
// returns the log of the command and empties it for the next.
func (r *sharedEngineRun) engineLog(wantEngine bool) string {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(r.log)
		if err != nil && !os.IsNotExist(err) {
			r.t.Fatal(err)
		}
		if !wantEngine || strings.Contains(string(b), " stops after ") || time.Now().After(deadline) {
			if err := os.WriteFile(r.log, nil, 0o600); err != nil {
				r.t.Fatal(err)
			}
			return string(b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var (
	enginesServing = regexp.MustCompile(`(?m)^\S+ engine (\d+) serves `)
	engineStops    = regexp.MustCompile(`(?m)^\S+ engine \d+ stops after (\d+) connections \(Terraform gone: true\)$`)
)

// assertShared checks a command's engine log: one engine served every provider process the
// command started after the first, then stopped with Terraform and left no file behind.
func (r *sharedEngineRun) assertShared(what, log string) int {
	r.t.Helper()
	engines := enginesServing.FindAllStringSubmatch(log, -1)
	stops := engineStops.FindAllStringSubmatch(log, -1)
	if len(engines) != 1 || len(stops) != 1 || strings.Contains(log, "directly") {
		r.t.Fatalf("%s: want one engine, serving every process and stopping with Terraform; the engine log:\n%s", what, log)
	}
	if n, _ := strconv.Atoi(stops[0][1]); n < 2 {
		r.t.Errorf("%s: the engine served %d connections, want the validating and the planning processes' at least:\n%s", what, n, log)
	}
	left, err := filepath.Glob(filepath.Join(r.tmp, front.SocketDirName(os.Getuid()), "*"))
	if err != nil {
		r.t.Fatal(err)
	}
	if len(left) != 0 {
		r.t.Errorf("%s: the engine left %v in its socket folder", what, left)
	}
	pid, _ := strconv.Atoi(engines[0][1])
	return pid
}

// The released package on Linux: the provider Terraform starts is a front, and every provider
// process of one command shares one engine, which stops with Terraform; logging or the opt-out
// runs the engine directly in each process; an engine that dies in the middle of an apply is
// reported by Terraform as the provider's crash, with the engine's own output, and the next
// command recovers the release it left pending.
func TestPackage_sharedEngine(t *testing.T) {
	h := setup(t)
	h.forEachCLI(t, func(t *testing.T, cli CLI) {
		ctx := testContext(t)
		r := &sharedEngineRun{t: t, h: h, cli: cli, dir: t.TempDir(), tmp: t.TempDir(), log: filepath.Join(t.TempDir(), "engine.log")}
		name := "shared-engine-" + cli.Name + "-" + randomHex(3)
		// The environment's namespace, read from the state after the first apply.
		ns := ""
		t.Cleanup(func() {
			if ns != "" {
				_ = h.kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
			}
		})
		config := func(release string) {
			t.Helper()
			tf := fmt.Sprintf(`terraform {
  required_providers {
    gitlabk8s = { source = "gitlabk8s/gitlabk8s" }
  }
}
provider "gitlabk8s" {}
resource "gitlabk8s_environment" "e" {
  name = %q
}
output "namespace" {
  value = gitlabk8s_environment.e.namespace
}
%s`, name, release)
			if err := os.WriteFile(filepath.Join(r.dir, "main.tf"), []byte(tf), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		config("")
		if out, err := r.run(ctx, nil, "init", "-input=false", "-no-color"); err != nil {
			t.Fatalf("init: %v\n%s", err, out)
		}
		r.engineLog(false)

		if out, err := r.run(ctx, nil, "apply", "-auto-approve", "-input=false", "-no-color"); err != nil {
			t.Fatalf("apply: %v\n%s", err, out)
		}
		r.assertShared("apply", r.engineLog(true))
		out, err := r.run(ctx, nil, "output", "-raw", "namespace")
		if err != nil || out == "" {
			t.Fatalf("output namespace: %v\n%s", err, out)
		}
		ns = out
		r.engineLog(false)
		if out, err := r.run(ctx, nil, "plan", "-detailed-exitcode", "-input=false", "-no-color"); err != nil {
			t.Fatalf("a plan after the apply changes something or fails: %v\n%s", err, out)
		}
		r.assertShared("plan", r.engineLog(true))

		for _, direct := range []struct{ env, reason string }{
			{"TF_LOG=info", "runs the engine directly: TF_LOG is set"},
			{front.OptOut + "=0", "runs the engine directly: " + front.OptOut + " turns sharing off"},
		} {
			if out, err := r.run(ctx, []string{direct.env}, "plan", "-detailed-exitcode", "-input=false", "-no-color"); err != nil {
				t.Fatalf("plan with %s: %v\n%s", direct.env, err, out)
			}
			log := r.engineLog(false)
			if !strings.Contains(log, direct.reason) || strings.Contains(log, " serves ") {
				t.Errorf("with %s the engine should run directly in each process; the engine log:\n%s", direct.env, log)
			}
		}

		// An apply that waits for a pod that never becomes ready; its engine is killed meanwhile.
		chart := filepath.Join(h.repoRoot, "testdata", "charts", "rollout")
		config(fmt.Sprintf(`resource "gitlabk8s_release" "app" {
  name      = "app"
  namespace = gitlabk8s_environment.e.namespace
  chart     = %q
  timeout   = "5m"
  atomic    = false
  values    = ["deployment: {podLabels: {gitlabk8s.test/fail: Unready}}"]
}
`, chart))
		type result struct {
			out string
			err error
		}
		applied := make(chan result, 1)
		go func() {
			out, err := r.run(ctx, nil, "apply", "-auto-approve", "-input=false", "-no-color")
			applied <- result{out, err}
		}()
		var engine int
		if err := pollUntil(ctx, func(ctx context.Context) (bool, error) {
			select {
			case res := <-applied:
				return false, fmt.Errorf("the apply ended before its engine was killed: %v\n%s", res.err, res.out)
			default:
			}
			// Helm's record of the release: the apply is under way.
			if _, err := h.kube.CoreV1().Secrets(ns).Get(ctx, "sh.helm.release.v1.app.v1", metav1.GetOptions{}); errors.IsNotFound(err) {
				return false, nil
			} else if err != nil {
				return false, err
			}
			b, _ := os.ReadFile(r.log)
			m := enginesServing.FindStringSubmatch(string(b))
			if m == nil {
				return false, fmt.Errorf("the apply runs without a shared engine:\n%s", b)
			}
			engine, _ = strconv.Atoi(m[1])
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(engine, syscall.SIGQUIT); err != nil {
			t.Fatal(err)
		}
		res := <-applied
		for _, want := range []string{"plugin crashed", "panic: the connection to the provider's engine", "SIGQUIT: quit"} {
			if res.err == nil || !strings.Contains(res.out, want) {
				t.Fatalf("an apply whose engine died: want an error with %q; got %v:\n%s", want, res.err, res.out)
			}
		}
		r.engineLog(false)
		// The release left pending-install is taken over by the next command; the stop job's
		// destroy then removes everything.
		if out, err := r.run(ctx, nil, "destroy", "-auto-approve", "-input=false", "-no-color"); err != nil {
			t.Fatalf("destroy after the crash: %v\n%s", err, out)
		}
		r.assertShared("destroy", r.engineLog(true))
		if _, err := h.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
			// Namespace deletion finishes asynchronously; the destroy waited for it.
			t.Errorf("the namespace %s is still there after the destroy", ns)
		}
	})
}
