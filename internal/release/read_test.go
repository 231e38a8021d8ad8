package release

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/drift"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// liveCluster is a Cluster whose history and live objects are given: live objects by name,
// each answering for objects of its kind.
type liveCluster struct {
	history    []*helmv1.Release
	historyErr error
	live       map[string]manifest.Object
	liveErr    error
	// reads, when set, records each LiveObjects call: the kind and name of each object asked.
	reads *[][]string
}

// History returns the records of history named name, and those that name no release.
func (c liveCluster) History(_ context.Context, _, name string, _ int) (helmrelease.Stored, error) {
	var records []*helmv1.Release
	for _, rel := range c.history {
		if rel.Name == "" || rel.Name == name {
			records = append(records, rel)
		}
	}
	return helmrelease.StoredOf(records), c.historyErr
}

// Revisions returns the versions and statuses of History's records.
func (c liveCluster) Revisions(ctx context.Context, namespace, name string) ([]helmrelease.Revision, error) {
	stored, err := c.History(ctx, namespace, name, 0)
	return stored.Revisions, err
}
func (c liveCluster) Lookup(string) chart.Objects { return nil }
func (c liveCluster) LiveObjects(_ context.Context, _ string, objs []manifest.Object) ([]manifest.Object, error) {
	if c.reads != nil {
		asked := make([]string, len(objs))
		for i, obj := range objs {
			asked[i] = objectName(obj)
		}
		*c.reads = append(*c.reads, asked)
	}
	if c.liveErr != nil {
		return nil, c.liveErr
	}
	out := make([]manifest.Object, len(objs))
	for i, obj := range objs {
		name, _ := obj["metadata"].(map[string]any)["name"].(string)
		if live := c.live[name]; live != nil && live["kind"] == obj["kind"] {
			out[i] = live
		}
	}
	return out, nil
}

const readPassword = "hunter2-Passw0rd"

// configMap is a ConfigMap named name holding data.
func configMap(name string, data map[string]any) manifest.Object {
	return manifest.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": testNamespace}, "data": data}
}

// deployedRelease is revision 1 of release "app", deployed, applying two ConfigMaps and a hook,
// given config.
func deployedRelease(config map[string]any) *helmv1.Release {
	return &helmv1.Release{
		Name: "app", Namespace: testNamespace, Version: 1, Config: config,
		Info:  &helmv1.Info{Status: rcommon.StatusDeployed},
		Chart: &chartv2.Chart{Metadata: &chartv2.Metadata{Name: "app", Version: "1.0.0", APIVersion: "v2"}},
		Manifest: "---\n# Source: app/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  mode: a\n  url: postgres://app:" + readPassword + "@db\n" +
			"---\n# Source: app/templates/gone.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone\ndata:\n  a: b\n",
		Hooks: []*helmv1.Hook{{Path: "app/templates/hook.yaml", Manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hook\n  annotations:\n    helm.sh/hook: pre-install\ndata:\n  x: y\n"}},
	}
}

// readInputs are the inputs of release "app" given readPassword as a sensitive value.
func readInputs() Inputs {
	return Inputs{
		Namespace: testNamespace, Name: "app",
		Values:       chart.Values{SetSensitive: map[string]string{"password": readPassword}},
		Capabilities: Capabilities{IsNamespaced: manifest.BuiltinIsNamespaced},
	}
}

// A release that Helm no longer has is gone.
func TestRequest_readGone(t *testing.T) {
	req := Prepare(context.Background(), liveCluster{}, readInputs(), nil)
	got, err := req.Read(context.Background(), nil)
	if err != nil || !got.Gone {
		t.Fatalf("Read = %+v, %v, want gone", got, err)
	}
}

// A refresh shows the live values of the fields the chart sets (what the ignore rules leave
// out excluded), leaves out an object that no longer exists, keeps the recorded hooks, and
// hides the sensitive value; a release without a key gets one.
func TestRequest_readLive(t *testing.T) {
	live := configMap("app", map[string]any{"url": "postgres://app:" + readPassword + "@db", "mode": "changed-by-hand", "extra": "set by hand"})
	in := readInputs()
	in.Ignore = []drift.Ignore{{Kind: "ConfigMap", Name: "app", JSONPointers: []string{"/data/mode"}}}
	req := Prepare(context.Background(), liveCluster{history: []*helmv1.Release{deployedRelease(nil)}, live: map[string]manifest.Object{"app": live}}, in, nil)
	recorded := &Recorded{Manifests: map[string]string{"ConfigMap/hook": "recorded hook\n"}}
	got, err := req.Read(context.Background(), recorded)
	if err != nil {
		t.Fatal(err)
	}
	if got.Gone || got.Last.Version != 1 {
		t.Fatalf("Read = gone %v, revision %v; want revision 1", got.Gone, got.Last)
	}
	app := got.Manifests["ConfigMap/app"]
	if strings.Contains(app, readPassword) || !strings.Contains(app, "(sensitive value)") {
		t.Errorf("the live ConfigMap does not hide the password:\n%s", app)
	}
	if strings.Contains(app, "changed-by-hand") || strings.Contains(app, "set by hand") {
		t.Errorf("the live ConfigMap shows what the rules ignore or the chart does not set:\n%s", app)
	}
	if _, ok := got.Manifests["ConfigMap/gone"]; ok {
		t.Errorf("an object that no longer exists is shown")
	}
	if got.Manifests["ConfigMap/hook"] != "recorded hook\n" {
		t.Errorf("the recorded hook = %q, want it kept", got.Manifests["ConfigMap/hook"])
	}
	if got.RedactionRecord.Key == nil || !got.RecordChanged || got.RedactionRecord.Conservative {
		t.Errorf("record = %+v, changed %v; want a key drawn, not conservative", got.RedactionRecord, got.RecordChanged)
	}
	if req.Redactor.String(readPassword) == readPassword {
		t.Errorf("the request's redactor does not hide the password")
	}
}

// Only a release whose import recorded so is redacted as an import: every value Helm recorded
// as given to it is taken for sensitive, and the record says its manifests are conservative.
// A release without the mark is read as its configuration redacts it.
func TestRequest_readImported(t *testing.T) {
	given := "given-Value-42"
	rel := deployedRelease(map[string]any{"greeting": given})
	rel.Manifest += "---\n# Source: app/templates/greet.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: greet\ndata:\n  text: " + given + "\n"
	live := map[string]manifest.Object{"greet": configMap("greet", map[string]any{"text": given})}
	for _, imported := range []bool{true, false} {
		in := Inputs{Namespace: testNamespace, Name: "app", Capabilities: Capabilities{IsNamespaced: manifest.BuiltinIsNamespaced}, Imported: imported}
		req := Prepare(context.Background(), liveCluster{history: []*helmv1.Release{rel}, live: live}, in, nil)
		got, err := req.Read(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		greet := got.Manifests["ConfigMap/greet"]
		if hides := !strings.Contains(greet, given); hides != imported {
			t.Errorf("imported %v: the given value hidden = %v:\n%s", imported, hides, greet)
		}
		if got.RedactionRecord.Conservative != imported || got.EveryStringHidden != nil {
			t.Errorf("imported %v: record conservative %v, every string hidden %+v", imported, got.RedactionRecord.Conservative, got.EveryStringHidden)
		}
		if _, ok := got.Manifests["ConfigMap/hook"]; !ok {
			t.Errorf("imported %v: Helm's recorded hook is missing from %v", imported, got.Manifests)
		}
	}
}

// A refresh that cannot read the live objects says which step failed.
func TestRequest_readLiveError(t *testing.T) {
	refused := errors.New("configmaps is forbidden")
	req := Prepare(context.Background(), liveCluster{history: []*helmv1.Release{deployedRelease(nil)}, liveErr: refused}, readInputs(), nil)
	_, err := req.Read(context.Background(), nil)
	var failed *ReadError
	if !errors.As(err, &failed) || failed.Step != ReadLive || !errors.Is(err, refused) {
		t.Fatalf("Read = %v, want a ReadError at %s wrapping the refusal", err, ReadLive)
	}
}

// An imported release whose chart cannot be rendered again (Helm records it without its
// subcharts) hides every string of its objects but their names, and says why.
func TestRequest_readImportedEveryString(t *testing.T) {
	rel := deployedRelease(map[string]any{"greeting": "given-Value-42"})
	rel.Chart.Metadata.Dependencies = []*chartv2.Dependency{{Name: "db", Version: "1.0.0"}}
	live := map[string]manifest.Object{"app": configMap("app", map[string]any{"url": "postgres://app:" + readPassword + "@db"})}
	in := Inputs{Namespace: testNamespace, Name: "app", Capabilities: Capabilities{IsNamespaced: manifest.BuiltinIsNamespaced}, Imported: true}
	req := Prepare(context.Background(), liveCluster{history: []*helmv1.Release{rel}, live: live}, in, nil)
	got, err := req.Read(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.EveryStringHidden == nil || !strings.Contains(got.EveryStringHidden.Reason, "subcharts") {
		t.Errorf("every string hidden = %+v, want the subcharts named", got.EveryStringHidden)
	}
	if app := got.Manifests["ConfigMap/app"]; strings.Contains(app, "postgres") || !strings.Contains(app, "name: app") {
		t.Errorf("the manifest shows a value, or hides the name:\n%s", app)
	}
	if !got.RedactionRecord.Conservative || len(got.RedactionRecord.Digests) == 0 {
		t.Errorf("record = %+v, want conservative with the recorded objects' digests", got.RedactionRecord)
	}
}

// definition is a CustomResourceDefinition of group example.com for plural, its version v1
// served or not.
func definition(plural string, served bool) manifest.Object {
	return manifest.Object{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + ".example.com"},
		"spec":     map[string]any{"group": "example.com", "versions": []any{map[string]any{"name": "v1", "served": served, "storage": true}}},
	}
}

// The plan that turns ReplaceDefinitions on reads the definitions of crds/ alone from the
// cluster (the refresh read the other objects), shows them as the cluster has them, and names
// those the apply replaces: one the cluster has otherwise, one it has not, one the state did
// not record; not one the cluster has as recorded.
func TestRequest_withLiveDefinitionsReadsTheDefinitionsAlone(t *testing.T) {
	ctx := context.Background()
	rel := deployedRelease(nil)
	var defs []string
	for _, plural := range []string{"widgets", "gadgets", "gizmos", "sprockets"} {
		text, err := manifest.Render(definition(plural, true))
		if err != nil {
			t.Fatal(err)
		}
		defs = append(defs, text)
	}
	rel.Chart.Files = []*common.File{{Name: "crds/defs.yaml", Data: []byte(strings.Join(defs, "---\n"))}}
	live := map[string]manifest.Object{
		"app":                   configMap("app", map[string]any{"mode": "changed by hand"}),
		"widgets.example.com":   definition("widgets", true),
		"gadgets.example.com":   definition("gadgets", false),
		"sprockets.example.com": definition("sprockets", true),
	}
	key := func(plural string) string {
		return "CustomResourceDefinition.apiextensions.k8s.io/" + plural + ".example.com"
	}
	recorded := recordedRelease(t)
	for i, plural := range []string{"widgets", "gadgets", "gizmos"} {
		recorded.Manifests[key(plural)] = defs[i]
	}
	before := maps.Clone(recorded.Manifests)
	in := readInputs()
	in.ReplaceDefinitions = true
	var reads [][]string
	req := Prepare(ctx, liveCluster{history: []*helmv1.Release{rel}, live: live, reads: &reads}, in, nil)
	got, replaced, err := req.WithLiveDefinitions(ctx, recorded)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"CustomResourceDefinition widgets.example.com", "CustomResourceDefinition gadgets.example.com", "CustomResourceDefinition gizmos.example.com", "CustomResourceDefinition sprockets.example.com"}}
	if !slices.EqualFunc(reads, want, slices.Equal) {
		t.Errorf("objects read: %v, want %v (the definitions alone, once)", reads, want)
	}
	if want := []string{key("gadgets"), key("gizmos"), key("sprockets")}; !slices.Equal(replaced, want) {
		t.Errorf("replaced = %v, want %v", replaced, want)
	}
	if !strings.Contains(got.Manifests[key("gadgets")], "served: false") || got.Manifests[key("widgets")] != defs[0] || got.Manifests[key("sprockets")] == "" {
		t.Errorf("the definitions are not shown as the cluster has them:\n%v", got.Manifests)
	}
	if _, ok := got.Manifests[key("gizmos")]; ok {
		t.Errorf("a definition the cluster has not is shown:\n%s", got.Manifests[key("gizmos")])
	}
	if got.Manifests["ConfigMap/app"] != recorded.Manifests["ConfigMap/app"] {
		t.Errorf("an object other than a definition changed: %q, recorded %q", got.Manifests["ConfigMap/app"], recorded.Manifests["ConfigMap/app"])
	}
	if !maps.Equal(recorded.Manifests, before) {
		t.Errorf("the recorded manifests were changed in place")
	}

	// Under create (Helm's rule) nothing is read and recorded is returned as it is.
	in.ReplaceDefinitions, reads = false, nil
	req = Prepare(ctx, liveCluster{history: []*helmv1.Release{rel}, live: live, reads: &reads}, in, nil)
	if got, replaced, err := req.WithLiveDefinitions(ctx, recorded); err != nil || got != recorded || replaced != nil || reads != nil {
		t.Errorf("under create: %v, replaced %v, %v, read %v; want recorded, nothing replaced or read", got, replaced, err, reads)
	}
}
