package provider

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/e2e"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// Settings of the private cluster of the tests that stop or restart its API server. Unset, it
// lives in a temporary folder, on the first free ports from 17443 (API server) and 13379 (etcd).
const (
	envPrivateClusterDir   = "GITLABK8S_PRIVATE_CLUSTER_DIR"
	envPrivateAPIServer    = "GITLABK8S_PRIVATE_APISERVER_PORT"
	envPrivateEtcdPort     = "GITLABK8S_PRIVATE_ETCD_PORT"
	privateClusterStartFor = 10 * time.Minute
)

// testAccPrivateCluster starts a cluster of the test's own, stopped and wiped when the test
// ends, and points $KUBECONFIG at it. It skips the test unless TF_ACC is set.
func testAccPrivateCluster(t *testing.T) *testcluster.Private {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 to run it against a private local cluster")
	}
	opts := testcluster.PrivateOptions{Dir: os.Getenv(envPrivateClusterDir)}
	if opts.Dir == "" {
		dir, err := os.MkdirTemp("", "gitlabk8s-private-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		opts.Dir = dir
	}
	for name, port := range map[string]*int{envPrivateAPIServer: &opts.APIServerPort, envPrivateEtcdPort: &opts.EtcdPort} {
		if value := os.Getenv(name); value != "" {
			var err error
			if *port, err = strconv.Atoi(value); err != nil {
				t.Fatalf("%s=%q: want a port number", name, value)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), privateClusterStartFor)
	defer cancel()
	started := time.Now()
	p, err := testcluster.StartPrivate(ctx, opts)
	if err != nil {
		t.Fatalf("start a private cluster in %s: %v", opts.Dir, err)
	}
	t.Cleanup(func() {
		if err := p.Stop(context.Background()); err != nil {
			t.Errorf("stop the private cluster: %v", err)
		}
	})
	t.Logf("private cluster %s at %s, started in %s", p.Dir, p.Host, time.Since(started).Round(time.Second))
	testAccOn(t, p.Cluster)
	return p
}

// slowRollout is a release "app" of the rollout chart whose one pod becomes ready readyAfter
// after it is created (the local cluster's kwok stage gitlabk8s.test/ready-after).
func slowRollout(namespace, readyAfter string) string {
	return "\nprovider \"gitlabk8s\" {}\n" + rolloutRelease(namespace, chartserver.FixtureChart("rollout"),
		fmt.Sprintf("deployment:\n  podLabels: {gitlabk8s.test/ready-after: %q}", readyAfter), "")
}

// waitUntil polls done every 200 ms until it holds; the test fails, with the apply's output,
// after limit or when that output says the apply ended first.
func waitUntil(t *testing.T, what string, limit time.Duration, out *e2e.SyncBuffer, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within %s; the apply said:\n%s", what, limit, out.String())
		}
		if strings.Contains(out.String(), "Apply complete!") || strings.Contains(out.String(), "Error:") {
			t.Fatalf("the apply ended before %s:\n%s", what, out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// deploymentCreated says whether the Deployment app exists; Helm creates it last, so the
// install is then in its wait, and whether any of its replicas is available yet.
func (e *releaseTestEnv) deploymentCreated(t *testing.T) (created, available bool) {
	t.Helper()
	d, err := e.kube.AppsV1().Deployments(e.namespace).Get(t.Context(), "app", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true, d.Status.AvailableReplicas > 0
}

// finish waits for the CLI run cmd, and returns its output and error.
func finish(cmd *exec.Cmd, out *e2e.SyncBuffer) (string, error) {
	err := cmd.Wait()
	return out.String(), err
}

// The API server freezes (SIGSTOP) for 15 s, fifteen of the wait's poll intervals, while an
// install waits for its Deployment, then resumes (SIGCONT): the apply succeeds, no revision is
// left pending, and the next plan is empty. Both run on a private cluster: the shared one
// serves other tests meanwhile.
func TestAccRelease_apiServerFrozenOrRestartedDuringTheInstall(t *testing.T) {
	p := testAccPrivateCluster(t)

	t.Run("frozenDuringTheWait", func(t *testing.T) {
		e := testAccReleaseOn(t, p.Cluster)
		cli := newTerraformCLI(t, suiteCLI(t))
		cli.writeConfig(slowRollout(e.namespace, "10s"))
		cmd, out := cli.start("apply", "-auto-approve")
		waitUntil(t, "the creation of Deployment app", 3*time.Minute, out, func() bool {
			created, _ := e.deploymentCreated(t)
			return created
		})
		// One poll interval, so that the wait has read the Deployment once.
		time.Sleep(time.Second)
		if _, available := e.deploymentCreated(t); available {
			t.Fatal("Deployment app was available before the freeze; the freeze would not hit the wait")
		}
		resume, err := p.FreezeAPIServer()
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(15 * time.Second)
		if err := resume(); err != nil {
			t.Fatal(err)
		}
		if output, err := finish(cmd, out); err != nil {
			t.Fatalf("apply with the API server frozen for 15 s during its wait: %v\n%s", err, output)
		}
		e.notPending(t)
		if got := e.helmRevisions(t, "app"); !slices.Equal(got, []string{"1:deployed"}) {
			t.Fatalf("helm history = %v, want [1:deployed]", got)
		}
		if plan := cli.mustRun("plan"); !strings.Contains(plan, "No changes.") {
			t.Fatalf("plan after the apply is not empty:\n%s", plan)
		}
	})

	// The API server restarts (SIGTERM, then started again) once Helm has written the release's
	// record, before the install's objects are ready: the apply succeeds or fails naming the
	// fault, a second run converges, no revision is left pending, and the next plan is empty.
	t.Run("restartedAfterTheRecord", func(t *testing.T) {
		e := testAccReleaseOn(t, p.Cluster)
		cli := newTerraformCLI(t, suiteCLI(t))
		cli.writeConfig(slowRollout(e.namespace, "5s"))
		cmd, out := cli.start("apply", "-auto-approve")
		waitUntil(t, "Helm's record of release app", 3*time.Minute, out, func() bool {
			return len(e.helmRevisions(t, "app")) > 0
		})
		if _, available := e.deploymentCreated(t); available {
			t.Fatal("Deployment app was available before the restart; the restart would not hit the install")
		}
		restarted := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), privateClusterStartFor)
		defer cancel()
		if err := p.RestartAPIServer(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("API server restarted in %s", time.Since(restarted).Round(100*time.Millisecond))
		output, err := finish(cmd, out)
		if err != nil {
			if !strings.Contains(output, p.Host) && !strings.Contains(output, "API server") {
				t.Fatalf("the apply failed without naming the API server:\n%s", output)
			}
			t.Logf("the apply failed, naming the fault; running it again:\n%s", output)
			cli.mustRun("apply", "-auto-approve")
		}
		e.notPending(t)
		if got := e.helmRevisions(t, "app"); !slices.Contains(got, "1:deployed") && !slices.Contains(got, "2:deployed") {
			t.Fatalf("helm history = %v, want a deployed revision", got)
		}
		if plan := cli.mustRun("plan"); !strings.Contains(plan, "No changes.") {
			t.Fatalf("plan after the apply is not empty:\n%s", plan)
		}
		if retried := strings.Count(cli.providerLog(), "retrying "); retried == 0 {
			t.Fatal("the provider log says of no retry; the restart never hit a request")
		}
	})
}
