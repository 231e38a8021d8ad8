package release

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	helmv1 "helm.sh/helm/v4/pkg/release/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// aheadCluster is a liveCluster whose history is read only once a read of live objects has
// begun: a refresh that read the objects after the history, not while, would wait for nothing.
type aheadCluster struct {
	liveCluster
	reading chan struct{}
}

func (c aheadCluster) History(ctx context.Context, namespace, name string, expect int) (helmrelease.Stored, error) {
	select {
	case <-c.reading:
		return c.liveCluster.History(ctx, namespace, name, expect)
	case <-time.After(10 * time.Second):
		return helmrelease.Stored{}, errors.New("no object was read while the history was")
	}
}

func (c aheadCluster) LiveObjects(ctx context.Context, namespace string, objs []manifest.Object) ([]manifest.Object, error) {
	select {
	case c.reading <- struct{}{}:
	default:
	}
	return c.liveCluster.LiveObjects(ctx, namespace, objs)
}

// recordedRelease is what the state of deployedRelease holds after its last refresh: its two
// ConfigMaps and its hook, and a CustomResourceDefinition of its crds/ folder.
func recordedRelease(t *testing.T) *Recorded {
	t.Helper()
	write := func(obj manifest.Object) string {
		text, err := manifest.Render(obj)
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	hook := configMap("hook", map[string]any{"x": "y"})
	hook["metadata"].(map[string]any)["annotations"] = map[string]any{"helm.sh/hook": "pre-install"}
	return &Recorded{Complete: true, Manifests: map[string]string{
		"ConfigMap/app":  write(configMap("app", map[string]any{"mode": "a"})),
		"ConfigMap/gone": write(configMap("gone", map[string]any{"a": "b"})),
		"ConfigMap/hook": write(hook),
		"CustomResourceDefinition.apiextensions.k8s.io/widgets.example.com": write(manifest.Object{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "widgets.example.com"},
		}),
	}}
}

// A refresh reads the objects its state recorded while it reads the history, hooks and
// definitions left out, and reads nothing more when those are the last revision's: what it
// shows is what a refresh that read them after the history shows.
func TestPrepareRefresh_readsTheRecordedObjectsWhileTheHistoryIsRead(t *testing.T) {
	live := map[string]manifest.Object{"app": configMap("app", map[string]any{"url": "postgres://app:" + readPassword + "@db", "mode": "changed"})}
	var reads [][]string
	cluster := aheadCluster{
		liveCluster: liveCluster{history: []*helmv1.Release{deployedRelease(nil)}, live: live, reads: &reads},
		reading:     make(chan struct{}, 1),
	}
	recorded := recordedRelease(t)
	ahead, err := PrepareRefresh(context.Background(), cluster, readInputs(), recorded).Read(context.Background(), recorded)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"ConfigMap app", "ConfigMap gone"}}; !slices.EqualFunc(reads, want, slices.Equal) {
		t.Errorf("objects read: %v, want %v (once, while the history was read; no hook, no definition)", reads, want)
	}
	after, err := Prepare(context.Background(), liveCluster{history: []*helmv1.Release{deployedRelease(nil)}, live: live}, readInputs(), nil).Read(context.Background(), recorded)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(ahead.Manifests, after.Manifests) {
		t.Errorf("read ahead, the refresh shows\n%v\nread after the history\n%v", ahead.Manifests, after.Manifests)
	}
	if !strings.Contains(ahead.Manifests["ConfigMap/app"], "changed") {
		t.Errorf("the live value is not shown:\n%s", ahead.Manifests["ConfigMap/app"])
	}
}

// Helm's record may name the release's namespace where the state's key leaves it out (a chart
// that sets metadata.namespace): the object is the same, and is not read twice.
func TestPrepareRefresh_anObjectNamingTheReleasesNamespaceIsTheOneReadAhead(t *testing.T) {
	rel := deployedRelease(nil)
	rel.Manifest = strings.ReplaceAll(rel.Manifest, "  name: app\n", "  name: app\n  namespace: "+testNamespace+"\n")
	var reads [][]string
	cluster := liveCluster{history: []*helmv1.Release{rel}, live: map[string]manifest.Object{"app": configMap("app", map[string]any{"mode": "a"})}, reads: &reads}
	recorded := recordedRelease(t)
	if _, err := PrepareRefresh(context.Background(), cluster, readInputs(), recorded).Read(context.Background(), recorded); err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"ConfigMap app", "ConfigMap gone"}}; !slices.EqualFunc(reads, want, slices.Equal) {
		t.Errorf("objects read: %v, want %v", reads, want)
	}
}

// An object of the last revision the state did not record (an upgrade made outside
// Terraform) is read after the history, alone.
func TestPrepareRefresh_readsWhatTheStateDidNotRecordAfterwards(t *testing.T) {
	rel := deployedRelease(nil)
	rel.Manifest += "---\n# Source: app/templates/new.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\ndata:\n  n: \"1\"\n"
	live := map[string]manifest.Object{
		"app": configMap("app", map[string]any{"mode": "a"}),
		"new": configMap("new", map[string]any{"n": "1"}),
	}
	var reads [][]string
	cluster := liveCluster{history: []*helmv1.Release{rel}, live: live, reads: &reads}
	recorded := recordedRelease(t)
	got, err := PrepareRefresh(context.Background(), cluster, readInputs(), recorded).Read(context.Background(), recorded)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"ConfigMap app", "ConfigMap gone"}, {"ConfigMap new"}}; !slices.EqualFunc(reads, want, slices.Equal) {
		t.Errorf("objects read: %v, want %v", reads, want)
	}
	if _, ok := got.Manifests["ConfigMap/new"]; !ok {
		t.Errorf("the object the state did not record is not shown: %v", got.Manifests)
	}
	if _, ok := got.Manifests["ConfigMap/gone"]; ok {
		t.Errorf("an object read ahead as gone is shown")
	}
}

// A read ahead that fails is read again after the history, and its failure, when it fails
// again, is the refresh's.
func TestPrepareRefresh_aFailedReadAheadIsReadAgain(t *testing.T) {
	refused := errors.New("configmaps is forbidden")
	var reads [][]string
	cluster := liveCluster{history: []*helmv1.Release{deployedRelease(nil)}, liveErr: refused, reads: &reads}
	recorded := recordedRelease(t)
	_, err := PrepareRefresh(context.Background(), cluster, readInputs(), recorded).Read(context.Background(), recorded)
	var failed *ReadError
	if !errors.As(err, &failed) || failed.Step != ReadLive || !errors.Is(err, refused) {
		t.Fatalf("Read = %v, want a ReadError at %s wrapping the refusal", err, ReadLive)
	}
	if len(reads) != 2 {
		t.Errorf("objects read %d times (%v), want twice: ahead, then again", len(reads), reads)
	}
}

// Only objects whose key and manifest say what they are are read ahead: not a name hidden as
// sensitive, nor a manifest without an apiVersion line of the key's group.
func TestRecordedReadAhead_leavesOutWhatItCannotName(t *testing.T) {
	rec := &Recorded{Manifests: map[string]string{
		"ConfigMap/app":                                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
		"ConfigMap/(sensitive value)":                      "apiVersion: v1\nkind: ConfigMap\n",
		"Deployment.apps/web":                              "apiVersion: apps/v1\nkind: Deployment\n",
		"Deployment.apps/other-group":                      "apiVersion: extensions/v1beta1\nkind: Deployment\n",
		"Service/no-version":                               "kind: Service\n",
		"Role.rbac.authorization.k8s.io/monitoring/reader": "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n",
	}}
	var got []string
	for _, obj := range rec.readAhead() {
		metadata := obj["metadata"].(map[string]any)
		namespace, _ := metadata["namespace"].(string)
		got = append(got, obj["apiVersion"].(string)+" "+obj["kind"].(string)+" "+namespace+"/"+metadata["name"].(string))
	}
	want := []string{"v1 ConfigMap /app", "apps/v1 Deployment /web", "rbac.authorization.k8s.io/v1 Role monitoring/reader"}
	if !slices.Equal(got, want) {
		t.Errorf("read ahead: %q, want %q", got, want)
	}
}

// A Secret read ahead carries the type its manifest shows, which says whether a LIST that
// leaves Helm's release records out holds it: none when the manifest names none (Opaque), and
// nil (not known) when the manifest's type is not a plain scalar or was partly hidden.
func TestRecordedReadAhead_givesSecretsTheirType(t *testing.T) {
	secret := func(name, rest string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + name + "\n" + rest
	}
	rec := &Recorded{Manifests: map[string]string{
		"Secret/opaque":          secret("opaque", "stringData:\n  a: (sensitive value)\ntype: Opaque\n"),
		"Secret/tls":             secret("tls", "type: kubernetes.io/tls\n"),
		"Secret/untyped":         secret("untyped", "stringData:\n  type: x\n"),
		"Secret/record":          secret("record", "type: helm.sh/release.v1\n"),
		"Secret/hidden":          secret("hidden", "type: helm.sh/(sensitive value).v1\n"),
		"Secret/block":           secret("block", "type: |-\n  helm.sh/release.v1\n"),
		"ConfigMap/typed":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typed\ntype: x\n",
		"Secret.example.com/crd": "apiVersion: example.com/v1\nkind: Secret\nmetadata:\n  name: crd\ntype: x\n",
	}}
	got := map[string]string{}
	for _, obj := range rec.readAhead() {
		name := obj["metadata"].(map[string]any)["name"].(string)
		switch t, named := obj["type"]; {
		case !named:
			got[name] = "none"
		case t == nil:
			got[name] = "unknown"
		default:
			got[name] = t.(string)
		}
	}
	want := map[string]string{
		"opaque": "Opaque", "tls": "kubernetes.io/tls", "untyped": "none", "record": "helm.sh/release.v1",
		"hidden": "unknown", "block": "unknown", "typed": "none", "crd": "none",
	}
	if !maps.Equal(got, want) {
		t.Errorf("types read ahead: %v, want %v", got, want)
	}
}

// expectingCluster is a liveCluster that records the revision each read of the history expects.
type expectingCluster struct {
	liveCluster
	expects *[]int
}

func (c expectingCluster) History(ctx context.Context, namespace, name string, expect int) (helmrelease.Stored, error) {
	*c.expects = append(*c.expects, expect)
	return c.liveCluster.History(ctx, namespace, name, expect)
}

// An apply, and a plan that no refresh came before, read the history expecting the revision
// the state records, as a refresh does, so that its record is read while the list is; without
// a record they expect none.
func TestPrepare_expectsTheRevisionTheStateRecords(t *testing.T) {
	var expects []int
	cluster := expectingCluster{liveCluster: liveCluster{history: []*helmv1.Release{deployedRelease(nil)}}, expects: &expects}
	recorded := recordedRelease(t)
	recorded.Revision = 7
	for _, rec := range []*Recorded{recorded, nil} {
		if req := Prepare(context.Background(), cluster, readInputs(), rec); !req.History.Read {
			t.Fatalf("history not read: %v", req.History.Err)
		}
	}
	if want := []int{7, 0}; !slices.Equal(expects, want) {
		t.Errorf("the history's reads expected revisions %v, want %v", expects, want)
	}
}
