package chart

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"

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
		redactor := manifest.NewKeyedRedactor(append(v.SensitiveInputs(), red.Sensitive...), red.Key, nil)
		return nil, errors.New(RedactRenderError(ctx, l, v, o, err, redactor))
	}
	return RedactStable(ctx, l, v, o, rendered, red)
}
