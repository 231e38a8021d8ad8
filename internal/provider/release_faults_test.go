package provider

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testing/faultproxy"
)

// behindTunnel starts a fault proxy in front of the local cluster's API server, as the GitLab
// agent's tunnel sits in front of a CI job's cluster, and points $KUBECONFIG (and so the
// provider of every terraform run started after it) at it. The test's own clients still reach
// the API server directly.
func (e *releaseTestEnv) behindTunnel(t *testing.T) *faultproxy.Proxy {
	t.Helper()
	upstream, err := faultproxy.UpstreamOf(e.cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := faultproxy.Start(upstream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := proxy.Kubeconfig(e.cluster.Kubeconfig, kubeconfig); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	return proxy
}

// benchRelease is a release of the benchmarks' generated chart with objects objects.
func benchRelease(t *testing.T, namespace string, objects int, revision string) string {
	t.Helper()
	chartDir, err := filepath.Abs(filepath.Join("..", "..", "scripts", "bench", "chart"))
	if err != nil {
		t.Fatal(err)
	}
	return "\nprovider \"gitlabk8s\" {}\n" + releaseConfig("app", namespace, chartDir, fmt.Sprintf(`  timeout   = "5m"
  set       = { objects = %d, revision = %q }`, objects, revision))
}

// applyConverges runs terraform apply and, when it fails, once more; the second must succeed.
// It returns whether the first failed.
func applyConverges(t *testing.T, cli *terraformCLI, args ...string) bool {
	t.Helper()
	out, err := cli.run(args...)
	if err == nil {
		return false
	}
	t.Logf("first %s failed; running it again:\n%s", args[0], out)
	cli.mustRun(args...)
	return true
}

// notPending fails the test when Helm left a revision of the release app pending.
func (e *releaseTestEnv) notPending(t *testing.T) {
	t.Helper()
	for _, revision := range e.helmRevisions(t, "app") {
		if strings.Contains(revision, "pending") {
			t.Fatalf("helm history %v holds a pending revision", e.helmRevisions(t, "app"))
		}
	}
}

// A tunnel 20 ms away each way that drops every open connection every 2 s during the install, the upgrade and the
// destroy of a release of 100 objects: each succeeds, or its second run converges, no revision is
// left pending, the next plan is empty, and the provider says what it retried.
func TestAccRelease_tunnelResetsEveryTwoSeconds(t *testing.T) {
	e := testAccRelease(t)
	proxy := e.behindTunnel(t)
	// The tunnel's far end is 20 ms away each way, as a GitLab agent's is: requests are in
	// flight most of the time, so the resets break requests and not only idle connections,
	// which Go's transport would reopen without a word on a fast loopback.
	if err := proxy.Delay(20 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	cli := newTerraformCLI(t, suiteCLI(t))
	stop := proxy.ResetEvery(context.Background(), 2*time.Second)
	t.Cleanup(func() { _ = stop() })

	var secondRuns []string
	cli.writeConfig(benchRelease(t, e.namespace, 100, "1"))
	if applyConverges(t, cli, "apply", "-auto-approve") {
		secondRuns = append(secondRuns, "install")
	}
	e.notPending(t)
	if got := e.helmRevisions(t, "app"); !slices.Contains(got, "1:deployed") && !slices.Contains(got, "2:deployed") {
		t.Fatalf("after the install helm history = %v, want a deployed revision", got)
	}
	if plan := cli.mustRun("plan"); !strings.Contains(plan, "No changes.") {
		t.Fatalf("plan after the install is not empty:\n%s", plan)
	}

	cli.writeConfig(benchRelease(t, e.namespace, 100, "2"))
	if applyConverges(t, cli, "apply", "-auto-approve") {
		secondRuns = append(secondRuns, "upgrade")
	}
	e.notPending(t)
	if got := e.configMapData(t, "app-0000", "revision"); got != "2" {
		t.Fatalf("after the upgrade ConfigMap app-0000 has revision %q, want 2", got)
	}
	if plan := cli.mustRun("plan"); !strings.Contains(plan, "No changes.") {
		t.Fatalf("plan after the upgrade is not empty:\n%s", plan)
	}

	if applyConverges(t, cli, "destroy", "-auto-approve") {
		secondRuns = append(secondRuns, "destroy")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got := e.helmRevisions(t, "app"); len(got) != 0 {
		t.Fatalf("after the destroy helm history = %v, want none", got)
	}
	if left := e.benchConfigMapsLeft(t); left != 0 {
		t.Fatalf("after the destroy %d ConfigMaps of the release are left", left)
	}

	// The schedule must have broken connections, and the provider must have ridden them out.
	if proxy.Resets() < 5 {
		t.Fatalf("the tunnel reset only %d times; the test proved nothing", proxy.Resets())
	}
	retried := strings.Count(cli.providerLog(), "retrying ")
	if retried == 0 {
		t.Fatal("the provider log says of no retry; the resets never hit a request")
	}
	t.Logf("%d resets, %d retries logged, second runs: %v", proxy.Resets(), retried, secondRuns)
	if len(secondRuns) > 0 {
		t.Errorf("needed a second run for %v; the retries should ride out a reset every 2s", secondRuns)
	}
}

// behindGateway starts the tunnel's HTTP layer in front of the local cluster's API server and
// points $KUBECONFIG (and so the provider of every terraform run started after it) at it. The
// test's own clients still reach the API server directly.
func (e *releaseTestEnv) behindGateway(t *testing.T) *faultproxy.Gateway {
	t.Helper()
	gateway, err := faultproxy.StartGateway(e.cluster.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gateway.Close)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := gateway.Kubeconfig(e.cluster.Kubeconfig, kubeconfig); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	return gateway
}

// benchConfigMapsLeft is how many ConfigMaps of the bench chart are in the namespace.
func (e *releaseTestEnv) benchConfigMapsLeft(t *testing.T) int {
	t.Helper()
	left, err := e.kube.CoreV1().ConfigMaps(e.namespace).List(t.Context(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=bench"})
	if err != nil {
		t.Fatal(err)
	}
	return len(left.Items)
}

// appliedBehindGateway applies a release of the bench chart with objects objects, its
// requests passing through a gateway that can answer in the API server's place.
func appliedBehindGateway(t *testing.T, objects int) (*releaseTestEnv, *faultproxy.Gateway, *terraformCLI) {
	t.Helper()
	e := testAccRelease(t)
	gateway := e.behindGateway(t)
	cli := newTerraformCLI(t, suiteCLI(t))
	cli.writeConfig(benchRelease(t, e.namespace, objects, "1"))
	cli.mustRun("apply", "-auto-approve")
	return e, gateway, cli
}

// Helm's uninstall reads each object before deleting it, to check that the release owns it, and
// skips one whose read fails; it then purged the records, and the object was left for good. The
// provider deletes what the uninstall left before it removes the records. (The provider reads
// the owners at once before Helm does; when that read fails, Helm reads each object itself.)
func TestAccRelease_destroyDeletesWhatTheUninstallSkipped(t *testing.T) {
	e, gateway, cli := appliedBehindGateway(t, 10)

	// Without a refresh, the first read of the ConfigMaps in the destroy is the one of their
	// owners before Helm's uninstall checks them, and the first read of the object alone is
	// Helm's check of its owner: each refused once, as a passing fault of the API server would.
	listed := "/api/v1/namespaces/" + e.namespace + "/configmaps"
	skipped := listed + "/app-0003"
	gateway.Answer(&faultproxy.Rule{
		Match:    func(r *http.Request) bool { return r.Method == http.MethodGet && r.URL.Path == listed },
		Share:    1,
		Times:    1,
		Statuses: []int{http.StatusInternalServerError},
	}, &faultproxy.Rule{
		Match:    func(r *http.Request) bool { return r.Method == http.MethodGet && r.URL.Path == skipped },
		Share:    1,
		Times:    1,
		Statuses: []int{http.StatusInternalServerError},
	})
	cli.mustRun("destroy", "-auto-approve", "-refresh=false")
	if !strings.Contains(cli.providerLog(), "ownership could not be verified") {
		t.Fatalf("the provider log does not say that Helm skipped an object (the gateway answered %v); the test proved nothing", gateway.Answered())
	}
	if got := e.helmRevisions(t, "app"); len(got) != 0 {
		t.Fatalf("after the destroy helm history = %v, want none", got)
	}
	if left := e.benchConfigMapsLeft(t); left != 0 {
		t.Fatalf("after the destroy %d ConfigMaps of the release are left", left)
	}
}

// Helm's uninstall reads the owner of each object of the release before it deletes it, one
// GET after another, a round trip each through the GitLab agent's tunnel; the destroy has them
// read at once instead. Only an object the read shows the release does not own by Helm's rule
// (here one that another release took over, and one that still names the release but lacks
// Helm's managed-by label) is left for Helm to read and judge itself: those are the objects read
// alone, and the ones left, by Helm and by the provider's removal of what Helm's uninstall left;
// every other is deleted.
func TestAccRelease_destroyReadsOwnersAtOnce(t *testing.T) {
	e, gateway, cli := appliedBehindGateway(t, 30)
	for name, unown := range map[string]func(*corev1.ConfigMap){
		"app-0003": func(cm *corev1.ConfigMap) { cm.Annotations["meta.helm.sh/release-name"] = "other" },
		"app-0004": func(cm *corev1.ConfigMap) { delete(cm.Labels, "app.kubernetes.io/managed-by") },
	} {
		cm, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		unown(cm)
		if _, err := e.kube.CoreV1().ConfigMaps(e.namespace).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	gateway.Requests()
	cli.mustRun("destroy", "-auto-approve", "-refresh=false")
	alone := regexp.MustCompile(`^GET /(api/v1|apis/[^/]+/[^/]+)/namespaces/` + regexp.QuoteMeta(e.namespace) + `/[a-z]+/app-[^/?]+$`)
	var read []string
	deleted := 0
	for _, r := range gateway.Requests() {
		if alone.MatchString(r) {
			read = append(read, r)
		}
		if strings.HasPrefix(r, http.MethodDelete+" ") && strings.Contains(r, "/app-") {
			deleted++
		}
	}
	if deleted != 28 {
		t.Errorf("the gateway saw %d deletions of the release's objects, want 28: all but the two the release does not own", deleted)
	}
	slices.Sort(read)
	if want := []string{"GET /api/v1/namespaces/" + e.namespace + "/configmaps/app-0003", "GET /api/v1/namespaces/" + e.namespace + "/configmaps/app-0004"}; !slices.Equal(read, want) {
		t.Errorf("the destroy read these objects one at a time:\n%s\nwant only\n%s", strings.Join(read, "\n"), strings.Join(want, "\n"))
	}
	if got := e.helmRevisions(t, "app"); len(got) != 0 {
		t.Fatalf("after the destroy helm history = %v, want none", got)
	}
	for _, name := range []string{"app-0003", "app-0004"} {
		if _, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			t.Errorf("%s, which the release does not own, is not left: %v", name, err)
		}
	}
	if left := e.benchConfigMapsLeft(t); left != 2 {
		t.Fatalf("after the destroy %d ConfigMaps of the release are left, want the two it does not own", left)
	}
}

// The tunnel answers 30% of requests 503 or 429 with a Retry-After for a whole plan, apply and
// destroy: each succeeds at once, and with the tunnel well again the plan after the apply is empty.
func TestAccRelease_aThirdOfRequestsAnswered503Or429(t *testing.T) {
	e := testAccRelease(t)
	gateway := e.behindGateway(t)
	cli := newTerraformCLI(t, suiteCLI(t))
	storm := &faultproxy.Rule{Share: 0.3, Statuses: []int{http.StatusServiceUnavailable, http.StatusTooManyRequests}, RetryAfter: "1"}
	gateway.Answer(storm)

	cli.writeConfig(benchRelease(t, e.namespace, 20, "1"))
	cli.mustRun("plan")
	cli.mustRun("apply", "-auto-approve")
	e.notPending(t)
	gateway.Answer()
	if plan := cli.mustRun("plan"); !strings.Contains(plan, "No changes.") {
		t.Fatalf("plan after the apply is not empty:\n%s", plan)
	}
	gateway.Answer(storm)
	cli.mustRun("destroy", "-auto-approve")
	if got := e.helmRevisions(t, "app"); len(got) != 0 {
		t.Fatalf("after the destroy helm history = %v, want none", got)
	}
	if left := e.benchConfigMapsLeft(t); left != 0 {
		t.Fatalf("after the destroy %d ConfigMaps of the release are left", left)
	}
	answered := gateway.Answered()
	if answered[http.StatusServiceUnavailable] == 0 || answered[http.StatusTooManyRequests] == 0 {
		t.Fatalf("the gateway answered %v; the storm never hit", answered)
	}
	if retried := strings.Count(cli.providerLog(), "retrying "); retried == 0 {
		t.Fatal("the provider log says of no retry")
	}
	t.Logf("answered %v, forwarded %d", answered, gateway.Forwarded())
}
