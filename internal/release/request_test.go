package release

import (
	"context"
	"errors"
	"fmt"
	"testing"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

const testNamespace = "review-1"

// storedRelease is a revision of release "app" as Helm's storage holds it.
func storedRelease(version int, status rcommon.Status) *helmv1.Release {
	return &helmv1.Release{
		Name: "app", Namespace: testNamespace, Version: version,
		Info:     &helmv1.Info{Status: status},
		Chart:    &chartv2.Chart{Metadata: &chartv2.Metadata{Name: "app", Version: "1.0.0", APIVersion: "v2"}},
		Manifest: "---\n# Source: app/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
	}
}

// countingCluster is a Helm client over a fake API server whose Secrets hold history, and
// the number of times Helm's storage was read.
func countingCluster(t *testing.T, history ...*helmv1.Release) (*helmrelease.Client, *int) {
	t.Helper()
	clientset := fake.NewClientset()
	secrets := driver.NewSecrets(clientset.CoreV1().Secrets(testNamespace))
	for _, rel := range history {
		if err := secrets.Create(helmStorageKey(rel), rel); err != nil {
			t.Fatal(err)
		}
	}
	reads := 0
	clientset.PrependReactor("*", "secrets", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetVerb() == "list" || action.GetVerb() == "get" {
			reads++
		}
		return false, nil, nil
	})
	return helmrelease.New(&kube.Clients{Config: &rest.Config{}, Kubernetes: clientset}, helmrelease.Options{}), &reads
}

// helmStorageKey is the key Helm's storage files a revision under.
func helmStorageKey(rel *helmv1.Release) string {
	return fmt.Sprintf("sh.helm.release.v1.%s.v%d", rel.Name, rel.Version)
}

// A plan asks the history for the next apply, the last revision (drawn values are kept from
// it, and ignore_differences compares with it) and renders more than once: Helm's storage is
// read once for all of it.
func TestPrepare_readsHelmStorageOnce(t *testing.T) {
	ctx := context.Background()
	cluster, reads := countingCluster(t, storedRelease(1, rcommon.StatusSuperseded), storedRelease(2, rcommon.StatusDeployed))
	req := Prepare(ctx, cluster, Inputs{Namespace: testNamespace, Name: "app"}, nil)
	for range 2 {
		next, err := req.History.Next(helmrelease.Claim{Recorded: true})
		if err != nil {
			t.Fatal(err)
		}
		if next.State != helmrelease.StateDeployed || next.Target != (helmrelease.Target{Revision: 3, IsUpgrade: true}) {
			t.Errorf("Next = %+v, want an upgrade of deployed revision 2 to 3", next)
		}
		last, err := req.History.Last(testNamespace, "app")
		if err != nil || last.Version != 2 {
			t.Fatalf("Last = %v, %v, want revision 2", last, err)
		}
		if docs := helmrelease.Applied(last); len(docs) == 0 {
			t.Errorf("Applied(last) holds no document")
		}
	}
	if *reads != 1 {
		t.Errorf("Helm's storage was read %d times, want once", *reads)
	}
}

func TestHistory_last(t *testing.T) {
	for name, tc := range map[string]struct {
		history  []*helmv1.Release
		version  int
		notFound bool
	}{
		"none":                          {notFound: true},
		"newest of any order":           {history: []*helmv1.Release{storedRelease(3, rcommon.StatusFailed), storedRelease(1, rcommon.StatusSuperseded), storedRelease(2, rcommon.StatusSuperseded)}, version: 3},
		"uninstalled with history kept": {history: []*helmv1.Release{storedRelease(1, rcommon.StatusUninstalled)}, notFound: true},
	} {
		t.Run(name, func(t *testing.T) {
			last, err := HistoryOf(tc.history...).Last(testNamespace, "app")
			if tc.notFound {
				if !errors.Is(err, helmrelease.ErrNotFound) {
					t.Fatalf("Last = %v, %v, want ErrNotFound", last, err)
				}
				return
			}
			if err != nil || last.Version != tc.version {
				t.Fatalf("Last = %v, %v, want revision %d", last, err, tc.version)
			}
		})
	}
}

// Without a cluster, or with a history that could not be read, nothing is decided from it.
func TestHistory_unread(t *testing.T) {
	offline := Prepare(context.Background(), nil, Inputs{Namespace: testNamespace, Name: "app"}, nil)
	if _, err := offline.History.Next(helmrelease.Claim{}); !errors.Is(err, ErrNoHistory) {
		t.Errorf("Next offline = %v, want ErrNoHistory", err)
	}
	if offline.Lookup != nil {
		t.Errorf("an offline request answers lookups")
	}
	refused := errors.New("secrets is forbidden")
	if _, err := (History{Err: refused}).Last(testNamespace, "app"); !errors.Is(err, refused) {
		t.Errorf("Last of an unreadable history = %v, want its error", err)
	}
}

// objectsFunc answers lookups with a function.
type objectsFunc func(apiVersion, kind, namespace, name string) (map[string]any, error)

func (f objectsFunc) Lookup(_ context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
	return f(apiVersion, kind, namespace, name)
}

// lookupCluster is a Cluster whose history is empty and whose lookups come from objects.
type lookupCluster struct{ objects chart.Objects }

func (c lookupCluster) History(context.Context, string, string, int) (helmrelease.Stored, error) {
	return helmrelease.Stored{}, nil
}
func (c lookupCluster) Revisions(context.Context, string, string) ([]helmrelease.Revision, error) {
	return nil, nil
}
func (c lookupCluster) Lookup(string) chart.Objects { return c.objects }
func (c lookupCluster) LiveObjects(_ context.Context, _ string, objs []manifest.Object) ([]manifest.Object, error) {
	return make([]manifest.Object, len(objs)), nil
}

// Every rendering of a request (a plan renders the current and the next revision) gets the
// same answers, each read once, and a rendering that changes its answer changes no other's.
func TestRequest_lookupsReadOnce(t *testing.T) {
	asked := 0
	cluster := lookupCluster{objects: objectsFunc(func(_, _, _, name string) (map[string]any, error) {
		asked++
		return map[string]any{"data": map[string]any{"password": "drawn-" + name}}, nil
	})}
	req := Prepare(context.Background(), cluster, Inputs{Namespace: testNamespace, Name: "app"}, nil)
	for range 2 {
		got, err := req.Lookup.Lookup(context.Background(), "v1", "Secret", testNamespace, "app")
		if err != nil {
			t.Fatal(err)
		}
		data, _ := got["data"].(map[string]any)
		if data["password"] != "drawn-app" {
			t.Fatalf("Lookup = %v, want the cluster's answer", got)
		}
		data["password"] = "changed by a rendering"
	}
	if asked != 1 {
		t.Errorf("the cluster was asked %d times, want once", asked)
	}
}
