package helmrelease

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// secretRequests records the requests made for Secrets: "get <name>" for each record read, and
// "list metadata" or "list whole" for each LIST, by the representation it asked for.
type secretRequests struct{ capturedLines }

func (s *secretRequests) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if path := req.URL.Path; strings.Contains(path, "/secrets") {
			var what string
			switch name := path[strings.LastIndex(path, "/")+1:]; {
			case name != "secrets":
				what = "get " + name
			case strings.Contains(req.Header.Get("Accept"), "as=PartialObjectMetadataList"):
				what = "list metadata"
			default:
				what = "list whole"
			}
			s.log(what)
		}
		return rt.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// A plan's history lists every revision's version and status from the labels of Helm's
// records, and reads whole only the records its decision reads: through the GitLab agent's
// tunnel, ten revisions of a large release are one record's bytes, not ten. The record of the
// revision the state expects is read while the list is. Revisions reads no record.
func TestHistory_readsWholeOnlyTheRecordsAPlanReads(t *testing.T) {
	ctx, c, kc, namespace, requests := historyClient(t, "history")
	// Records stored as Helm's storage stores them: "app" deployed at 4 with a failed upgrade
	// at 5, "web" deployed at 3.
	store := driver.NewSecrets(kc.CoreV1().Secrets(namespace))
	for name, statuses := range map[string][]rcommon.Status{
		"app": {rcommon.StatusSuperseded, rcommon.StatusSuperseded, rcommon.StatusSuperseded, rcommon.StatusDeployed, rcommon.StatusFailed},
		"web": {rcommon.StatusSuperseded, rcommon.StatusSuperseded, rcommon.StatusDeployed},
	} {
		for i, status := range statuses {
			rel := &release.Release{
				Name: name, Namespace: namespace, Version: i + 1, Chart: testChart(), Config: map[string]any{},
				Manifest: fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  revision: \"%d\"\n", name, i+1),
				Info:     &release.Info{Status: status, Description: "stored by the test"},
			}
			if err := store.Create(fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, i+1), rel); err != nil {
				t.Fatal(err)
			}
		}
	}
	requests.take()

	for _, tc := range []struct {
		name         string
		expect       int
		revisions    string
		records      []int
		wantRequests []string
	}{
		{"app", 0, "1:superseded 2:superseded 3:superseded 4:deployed 5:failed", []int{4, 5},
			[]string{"get sh.helm.release.v1.app.v4", "get sh.helm.release.v1.app.v5", "list metadata"}},
		{"app", 5, "1:superseded 2:superseded 3:superseded 4:deployed 5:failed", []int{4, 5},
			[]string{"get sh.helm.release.v1.app.v4", "get sh.helm.release.v1.app.v5", "list metadata"}},
		{"web", 3, "1:superseded 2:superseded 3:deployed", []int{3},
			[]string{"get sh.helm.release.v1.web.v3", "list metadata"}},
		// A state behind the history: the record it expected is read for nothing, the newest too.
		{"web", 2, "1:superseded 2:superseded 3:deployed", []int{3},
			[]string{"get sh.helm.release.v1.web.v2", "get sh.helm.release.v1.web.v3", "list metadata"}},
		{"gone", 0, "", nil, []string{"list metadata"}},
	} {
		stored, err := c.History(ctx, namespace, tc.name, tc.expect)
		if err != nil {
			t.Fatalf("History(%s, expect %d): %v", tc.name, tc.expect, err)
		}
		var records []int
		for _, r := range stored.Records {
			if r.Manifest == "" || r.Info == nil {
				t.Errorf("History(%s): revision %d's record was not read whole: %+v", tc.name, r.Version, r)
			}
			records = append(records, r.Version)
		}
		if got := revisionsText(stored.Revisions); got != tc.revisions {
			t.Errorf("History(%s, expect %d) revisions = %q, want %q", tc.name, tc.expect, got, tc.revisions)
		}
		if !slices.Equal(records, tc.records) {
			t.Errorf("History(%s, expect %d) records read whole = %v, want %v", tc.name, tc.expect, records, tc.records)
		}
		if got := requests.take(); !slices.Equal(got, tc.wantRequests) {
			t.Errorf("History(%s, expect %d) requests = %q, want %q", tc.name, tc.expect, got, tc.wantRequests)
		}
	}

	// Revisions, what the decision about another release needs, is the LIST alone.
	for name, want := range map[string]string{
		"app":  "1:superseded 2:superseded 3:superseded 4:deployed 5:failed",
		"web":  "1:superseded 2:superseded 3:deployed",
		"gone": "",
	} {
		got, err := c.Revisions(ctx, namespace, name)
		if err != nil {
			t.Fatalf("Revisions(%s): %v", name, err)
		}
		if got := revisionsText(got); got != want {
			t.Errorf("Revisions(%s) = %q, want %q", name, got, want)
		}
		if got := requests.take(); !slices.Equal(got, []string{"list metadata"}) {
			t.Errorf("Revisions(%s) requests = %q, want the LIST of metadata alone", name, got)
		}
	}
}

// A record without the version and status labels Helm's storage puts on it is read as Helm
// reads a history, every record whole, by History and Revisions alike.
func TestHistory_readsUnlabelledRecordsAsHelmDoes(t *testing.T) {
	ctx, c, kc, namespace, requests := historyClient(t, "unlabelled")
	store := driver.NewSecrets(kc.CoreV1().Secrets(namespace))
	for i, status := range []rcommon.Status{rcommon.StatusSuperseded, rcommon.StatusDeployed} {
		rel := &release.Release{
			Name: "app", Namespace: namespace, Version: i + 1, Chart: testChart(), Config: map[string]any{},
			Manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
			Info:     &release.Info{Status: status, Description: "stored by the test"},
		}
		key := fmt.Sprintf("sh.helm.release.v1.app.v%d", i+1)
		if err := store.Create(key, rel); err != nil {
			t.Fatal(err)
		}
		s, err := kc.CoreV1().Secrets(namespace).Get(ctx, key, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		delete(s.Labels, "version")
		if _, err := kc.CoreV1().Secrets(namespace).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	requests.take()
	const want = "1:superseded 2:deployed"
	stored, err := c.History(ctx, namespace, "app", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := revisionsText(stored.Revisions); got != want || len(stored.Records) != 2 {
		t.Errorf("History = %q with %d records read whole, want %q with 2", got, len(stored.Records), want)
	}
	revisions, err := c.Revisions(ctx, namespace, "app")
	if err != nil {
		t.Fatal(err)
	}
	if got := revisionsText(revisions); got != want {
		t.Errorf("Revisions = %q, want %q", got, want)
	}
	wantRequests := []string{"list metadata", "list metadata", "list whole", "list whole"}
	if got := requests.take(); !slices.Equal(got, wantRequests) {
		t.Errorf("requests = %q, want %q", got, wantRequests)
	}
}

// revisionsText writes revisions as "1:superseded 2:deployed".
func revisionsText(revisions []Revision) string {
	var out []string
	for _, r := range revisions {
		out = append(out, fmt.Sprintf("%d:%s", r.Version, r.Status))
	}
	return strings.Join(out, " ")
}

// historyClient returns a Client of the local cluster with a metadata client, whose requests
// for Secrets requests records, its clientset, and a namespace of the test's own named after
// prefix.
func historyClient(t *testing.T, prefix string) (context.Context, *Client, kubernetes.Interface, string, *secretRequests) {
	t.Helper()
	ctx, cluster := testcluster.ForTest(t)
	cfg, err := cluster.RESTConfig(testcluster.AdminContext)
	if err != nil {
		t.Fatal(err)
	}
	requests := &secretRequests{}
	cfg.Wrap(requests.wrap)
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, New(&kube.Clients{Config: cfg, Kubernetes: kc, Metadata: mc}, Options{}), kc, clusterNamespace(ctx, t, kc, prefix), requests
}
