package helmrelease

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
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
	namespace := clusterNamespace(ctx, t, kc, "history")
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
	c := New(&kube.Clients{Config: cfg, Kubernetes: kc, Metadata: mc}, Options{})
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
		var revisions []string
		for _, r := range stored.Revisions {
			revisions = append(revisions, fmt.Sprintf("%d:%s", r.Version, r.Status))
		}
		var records []int
		for _, r := range stored.Records {
			if r.Manifest == "" || r.Info == nil {
				t.Errorf("History(%s): revision %d's record was not read whole: %+v", tc.name, r.Version, r)
			}
			records = append(records, r.Version)
		}
		if got := strings.Join(revisions, " "); got != tc.revisions {
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
		var revisions []string
		for _, r := range got {
			revisions = append(revisions, fmt.Sprintf("%d:%s", r.Version, r.Status))
		}
		if got := strings.Join(revisions, " "); got != want {
			t.Errorf("Revisions(%s) = %q, want %q", name, got, want)
		}
		if got := requests.take(); !slices.Equal(got, []string{"list metadata"}) {
			t.Errorf("Revisions(%s) requests = %q, want the LIST of metadata alone", name, got)
		}
	}
}
