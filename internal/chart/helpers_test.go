package chart

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// loadFixture loads testdata/charts/<name> at the repository root.
func loadFixture(t *testing.T, name string) *Loaded {
	t.Helper()
	loaded, err := Load(context.Background(), Source{Chart: fixturePath(name)})
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return loaded
}

func fixturePath(name string) string { return chartserver.FixtureChart(name) }

// render renders a fixture as release "web" in namespace "review-x".
func render(t *testing.T, l *Loaded, v Values, o RenderOptions) *Rendered {
	t.Helper()
	values, err := MergeValues(v)
	if err != nil {
		t.Fatalf("merge values: %v", err)
	}
	if o.ReleaseName == "" {
		o.ReleaseName = "web"
	}
	if o.Namespace == "" {
		o.Namespace = "review-x"
	}
	rendered, err := Render(context.Background(), l, values, o)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return rendered
}

func keysOf(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func objectNames(objs []map[string]any) []string {
	var names []string
	for _, obj := range objs {
		metadata, _ := obj["metadata"].(map[string]any)
		names = append(names, obj["kind"].(string)+"/"+metadata["name"].(string))
	}
	return names
}

func mustContain(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s does not contain %q:\n%s", what, want, text)
		}
	}
}

// joinManifests prints manifests sorted by key, for whole-output searches.
func joinManifests(manifests map[string]string) string {
	var b strings.Builder
	for _, key := range keysOf(manifests) {
		b.WriteString("### " + key + "\n" + manifests[key])
	}
	return b.String()
}

// templateFile is a chart template named name.
func templateFile(name, text string) *common.File {
	return &common.File{Name: name, Data: []byte(text)}
}

// renderRedacted renders l as a plan does: RenderStable without a prior rendering, then
// RedactStable; a template error is redacted by RedactRenderError.
func renderRedacted(ctx context.Context, l *Loaded, v Values, o RenderOptions, red RedactionOptions) (*RedactedRendering, error) {
	values, err := MergeValues(v)
	if err != nil {
		return nil, err
	}
	rendered, err := RenderStable(ctx, l, values, o, Prior{})
	if err != nil {
		redactor := manifest.NewRedactor(append(v.SensitiveInputs(), red.Sensitive...), red.Key, nil)
		return nil, errors.New(RedactRenderError(ctx, l, v, o, err, redactor))
	}
	return RedactStable(ctx, l, v, o, rendered, red)
}

// writeUmbrella writes, under a new directory, the chart app whose Chart.yaml lists
// dependencies (and lock, when not empty, as its Chart.lock), beside a chart lib its file://
// dependency points at. It returns app's directory.
func writeUmbrella(t *testing.T, dependencies, lock string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"lib/Chart.yaml":               "apiVersion: v2\nname: lib\nversion: 0.1.0\ntype: library\n",
		"lib/templates/_lib.tpl":       `{{- define "lib.name" }}{{ .Release.Name }}-lib{{ end }}`,
		"app/Chart.yaml":               "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n" + dependencies,
		"app/templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ include \"lib.name\" . }}\n",
	}
	if lock != "" {
		files["app/Chart.lock"] = lock
	}
	writeTree(t, root, files)
	return filepath.Join(root, "app")
}

// writeTree writes files, by path under root, making their directories.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func dependencyVersions(l *Loaded) []string {
	var out []string
	for _, dep := range l.Chart.Dependencies() {
		out = append(out, dep.Name()+"@"+dep.Metadata.Version)
	}
	sort.Strings(out)
	return out
}

// testSeed is a release's seed in these tests.
var testSeed = []byte("0123456789abcdef0123456789abcdef")

// fakeCluster holds the objects a release applied, as lookup reads them back.
type fakeCluster struct{ objects map[lookupCall]map[string]any }

func newFakeCluster() *fakeCluster { return &fakeCluster{objects: map[lookupCall]map[string]any{}} }

func (c *fakeCluster) Lookup(_ context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
	if name == "" {
		var items []any
		for call, obj := range c.objects {
			if call.apiVersion == apiVersion && call.kind == kind && call.namespace == namespace {
				items = append(items, copyMap(obj))
			}
		}
		return map[string]any{"apiVersion": apiVersion, "kind": kind + "List", "items": items}, nil
	}
	return copyMap(c.objects[lookupCall{apiVersion, kind, namespace, name}]), nil
}

// apply stores r's objects in namespace as the API server would, with fields of its own.
func (c *fakeCluster) apply(r *Rendered, namespace string) {
	for _, obj := range r.Objects {
		live := stored(obj)
		metadata, _ := live["metadata"].(map[string]any)
		metadata["namespace"], metadata["uid"], metadata["resourceVersion"] = namespace, "uid-1", "7"
		c.objects[lookupCall{fmt.Sprint(obj["apiVersion"]), fmt.Sprint(obj["kind"]), namespace, fmt.Sprint(metadata["name"])}] = live
	}
}

// strongPassword has the characters strong passwords have, which templates escape.
const strongPassword = `Tr0ub&dor 3/c+rr%ct#h@rse:x`

// inMemoryChart builds a chart from template files, for cases no fixture
// covers.
func inMemoryChart(name string, templates map[string]string) *Loaded {
	ch := &helmchart.Chart{Metadata: &helmchart.Metadata{APIVersion: "v2", Name: name, Version: "0.1.0"}}
	for file, content := range templates {
		ch.Templates = append(ch.Templates, &common.File{Name: file, Data: []byte(content)})
	}
	return &Loaded{Chart: ch, Version: "0.1.0", Digest: directoryDigest(ch)}
}

func nested(obj map[string]any, fields ...string) any {
	var value any = obj
	for _, field := range fields {
		m, ok := value.(map[string]any)
		if !ok {
			return nil
		}
		value = m[field]
	}
	return value
}

// applied returns the documents of r the way Helm's release records them.
func applied(r *Rendered) []Document {
	var docs []Document
	for _, source := range slices.Sorted(maps.Keys(r.Files)) {
		docs = append(docs, Document{Source: source, Text: r.Files[source]})
	}
	return docs
}

func objectsByName(r *Rendered) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, obj := range slices.Concat(r.Objects, r.Hooks) {
		out[objectNames([]map[string]any{obj})[0]] = obj
	}
	return out
}

// tlsErrorKind is the kind of the *TLSError in err's chain, 0 when there is none.
func tlsErrorKind(err error) TLSErrorKind {
	var tlsErr *TLSError
	if errors.As(err, &tlsErr) {
		return tlsErr.Kind
	}
	return 0
}

// testRedactionKey keys the markers of the manifests tests compare.
var testRedactionKey = []byte("test-key-0123456789abcdef0123456")

// keyedManifests returns the manifests of r with sensitive hidden and markers keyed with
// testRedactionKey, as a release with its key shows them.
func keyedManifests(r *Rendered, namespace string, sensitive []string, isNamespaced func(apiVersion, kind string) bool) (map[string]string, error) {
	return RedactedManifests(r, namespace, manifest.NewRedactor(sensitive, testRedactionKey, nil), isNamespaced)
}

// mustFreeze freezes l to files without patches.
func mustFreeze(t *testing.T, l *Loaded, files map[string]string) *Loaded {
	t.Helper()
	frozen, err := Freeze(l, files, nil)
	if err != nil {
		t.Fatal(err)
	}
	return frozen
}
