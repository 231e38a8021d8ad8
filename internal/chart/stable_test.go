package chart

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// renderStable renders a fixture as release "web" in namespace "review-x", taking generated
// values from prior.
func renderStable(t *testing.T, l *Loaded, values map[string]any, prior []Document) *Rendered {
	t.Helper()
	rendered, err := RenderStable(context.Background(), l, values, RenderOptions{ReleaseName: "web", Namespace: "review-x"}, Prior{Documents: prior})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return rendered
}

// renderSeeded is renderStable drawing from testSeed, over the whole of prior (its traces, what
// Helm recorded).
func renderSeeded(t *testing.T, l *Loaded, values map[string]any, prior Prior) *Rendered {
	t.Helper()
	rendered, err := RenderStable(context.Background(), l, values, RenderOptions{ReleaseName: "web", Namespace: "review-x", Seed: testSeed}, prior)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return rendered
}

func TestRender_testHooksAreNotApplied(t *testing.T) {
	rendered := render(t, loadFixture(t, "zoo-podinfo"), Values{}, RenderOptions{})
	for _, name := range objectNames(rendered.Hooks) {
		if strings.Contains(name, "test-") {
			t.Errorf("hook %s runs only with helm test, and must not be among the hooks install and upgrade run", name)
		}
	}
	if got, want := objectNames(rendered.Hooks), []string{"Job/web-init", "Job/web-post-upgrade"}; !reflect.DeepEqual(got, want) {
		t.Errorf("hooks = %v, want %v", got, want)
	}
	if !strings.Contains(rendered.Files["zoo-podinfo/templates/tests/test-connection.yaml"], "web-test-") {
		t.Error("Files lacks the test hooks: a frozen chart would lose them for helm test")
	}
}

func TestRenderStable_testHooksWithRandomNamesAreNotGenerated(t *testing.T) {
	rendered := renderStable(t, loadFixture(t, "zoo-podinfo"), nil, nil)
	if rendered.NamesGenerated || len(rendered.Generated) > 0 {
		t.Errorf("NamesGenerated = %v, Generated = %v: test hooks are never applied, so their random names must not count",
			rendered.NamesGenerated, objectNames(rendered.Generated))
	}
}

func TestRenderStable_generatedValuesComeFromPrior(t *testing.T) {
	tests := []struct {
		fixture   string
		generated []string
	}{
		{"random", []string{"ConfigMap/web-random"}},
		{"zoo-passwords", []string{"Secret/web-db", "Secret/web-admin"}},
		{"zoo-webhook", []string{"Secret/web-webhook-tls", "ValidatingWebhookConfiguration/review-x-web", "ConfigMap/web-config"}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			l := loadFixture(t, tt.fixture)
			first := renderStable(t, l, nil, nil)
			if got := objectNames(first.Generated); !sameElements(got, tt.generated) {
				t.Errorf("without a prior, Generated = %v, want %v", got, tt.generated)
			}
			again := renderStable(t, l, nil, applied(first))
			if len(again.Generated) > 0 || again.NamesGenerated {
				t.Errorf("with the prior, Generated = %v, NamesGenerated = %v, want none", objectNames(again.Generated), again.NamesGenerated)
			}
			if !maps.Equal(again.Files, first.Files) && !sameObjects(t, again, first) {
				t.Errorf("with the first rendering as prior, the objects differ:\n%s\nvs\n%s", again.Manifest, first.Manifest)
			}
		})
	}
}

func TestRenderStable_changedValueKeepsGeneratedOnes(t *testing.T) {
	l := loadFixture(t, "zoo-webhook")
	first := renderStable(t, l, nil, nil)
	changed := renderStable(t, l, map[string]any{"message": "changed"}, applied(first))
	before, after := objectsByName(first), objectsByName(changed)
	for name, obj := range before {
		if name == "ConfigMap/web-config" {
			continue
		}
		if !reflect.DeepEqual(obj, after[name]) {
			t.Errorf("%s changed although it does not use message:\n%v\nvs\n%v", name, obj, after[name])
		}
	}
	cm := after["ConfigMap/web-config"]
	if got := nested(cm, "data", "message"); got != "changed" {
		t.Errorf("message = %v, want changed", got)
	}
	if got, want := nested(cm, "data", "installation"), nested(before["ConfigMap/web-config"], "data", "installation"); got != want {
		t.Errorf("the generated installation id changed from %v to %v with an unrelated value", want, got)
	}
}

func TestRenderStable_randomNamesComeFromPrior(t *testing.T) {
	l := inMemoryChart("names", map[string]string{
		"templates/job.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate-{{ randAlphaNum 5 | lower }}
  annotations:
    helm.sh/hook: pre-upgrade
spec:
  template:
    spec:
      containers: [{name: m, image: "{{ .Values.image }}"}]
`,
	})
	first := renderStable(t, l, map[string]any{"image": "a"}, nil)
	if !first.NamesGenerated {
		t.Fatal("NamesGenerated is false for a hook named at random")
	}
	again := renderStable(t, l, map[string]any{"image": "b"}, applied(first))
	if again.NamesGenerated {
		t.Error("NamesGenerated with a prior that holds the name")
	}
	if got, want := objectNames(again.Hooks), objectNames(first.Hooks); !reflect.DeepEqual(got, want) {
		t.Errorf("hook names = %v, want the prior's %v", got, want)
	}
	if got := fmt.Sprint(nested(again.Hooks[0], "spec", "template", "spec", "containers")); !strings.Contains(got, "image:b") {
		t.Errorf("the changed image did not reach the hook: %v", got)
	}
}

func TestReleaseDocuments(t *testing.T) {
	manifest := "---\n# Source: web/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n" +
		"---\n# Source: web/templates/b.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"
	hooks := []Document{{Source: "web/templates/h.yaml", Text: "kind: Job"}}
	got := ReleaseDocuments(manifest, hooks)
	want := []Document{
		// Helm 4 splits a manifest keeping each document's final newline, which a "|" block
		// scalar ending the document holds.
		{Source: "web/templates/a.yaml", Text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"},
		{Source: "web/templates/b.yaml", Text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"},
		hooks[0],
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReleaseDocuments = %#v, want %#v", got, want)
	}
}

func TestStabilizer_walk(t *testing.T) {
	d := &drawing{seed: testSeed, reproducible: true}
	tests := []struct {
		name string
		// v is the applied, traced, probed and apart value.
		v           [4]any
		prior       any
		hasPrior    bool
		traces      map[string]string
		want        any
		wantAnew    bool
		wantUnseded bool
	}{
		{"not drawn", [4]any{"x", "x", "x", "x"}, "p", true, nil, "x", false, false},
		{"drawn, no traces recorded", [4]any{"x", "t", "q", "t"}, "p", true, nil, "p", false, false},
		{"drawn, same trace", [4]any{"x", "t", "q", "t"}, "p", true, map[string]string{"": d.trace("t")}, "p", false, false},
		{"drawn, trace changed", [4]any{"x", "t", "q", "t"}, "p", true, map[string]string{"": d.trace("old")}, "x", false, false},
		{"drawn, new place", [4]any{"x", "t", "q", "t"}, "p", true, map[string]string{}, "x", false, false},
		{"drawn without prior", [4]any{"x", "t", "q", "t"}, nil, false, nil, "x", false, false},
		{"unseeded, trace changed", [4]any{"x", "t", "q", "a"}, "p", true, map[string]string{"": d.trace("old")}, "x", true, true},
		{"unseeded, same trace", [4]any{"x", "t", "q", "a"}, "p", true, map[string]string{"": d.trace("t")}, "p", false, false},
		{"nested leaf", [4]any{map[string]any{"k": "x", "s": 1.0}, map[string]any{"k": "t", "s": 1.0}, map[string]any{"k": "q", "s": 1.0}, map[string]any{"k": "t", "s": 1.0}},
			map[string]any{"k": "p", "s": 2.0}, true, nil, map[string]any{"k": "p", "s": 1.0}, false, false},
		{"drawn key", [4]any{map[string]any{"x": 1.0}, map[string]any{"t": 1.0}, map[string]any{"q": 1.0}, map[string]any{"t": 1.0}},
			map[string]any{"p": 1.0}, true, nil, map[string]any{"p": 1.0}, false, false},
		{"list element", [4]any{[]any{"s", "x"}, []any{"s", "t"}, []any{"s", "q"}, []any{"s", "t"}}, []any{"r", "p"}, true, nil, []any{"s", "p"}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &stabilizer{prior: Prior{Traces: tt.traces}, drawing: d, out: &stabilized{traces: map[string]string{}}}
			got := s.walk(tt.v, tt.prior, tt.hasPrior, "")
			if !reflect.DeepEqual(got, tt.want) || s.anewObject != tt.wantAnew || s.unseededAnew != tt.wantUnseded {
				t.Errorf("walk = %v (anew %v, unseeded anew %v); want %v (%v, %v)", got, s.anewObject, s.unseededAnew, tt.want, tt.wantAnew, tt.wantUnseded)
			}
		})
	}
	s := &stabilizer{drawing: &drawing{seed: testSeed}, out: &stabilized{traces: map[string]string{}}}
	if s.walk([4]any{"x", "t", "q", "t"}, nil, false, ""); !s.anewObject {
		t.Error("a value drawn anew from a seed of the rendering's own is not taken for one the apply draws differently")
	}
}

func TestFreeze_rendersExactlyTheFiles(t *testing.T) {
	l := inMemoryChart("frozen", map[string]string{
		"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-{{ randAlphaNum 4 | lower }}
data:
  template: {{ "{{ .Values.inside }}" | quote }}
  revision: {{ .Release.Revision | quote }}
`,
		"templates/_helpers.tpl": `{{- define "frozen.x" }}x{{ end }}`,
		"templates/NOTES.txt":    `Token {{ randAlphaNum 8 }}`,
	})
	first := render(t, l, Values{}, RenderOptions{})
	frozen := mustFreeze(t, l, first.Files)
	again := render(t, frozen, Values{}, RenderOptions{Revision: 7, IsUpgrade: true})
	if !maps.Equal(again.Files, first.Files) {
		t.Errorf("the frozen chart renders\n%v\nwant\n%v", again.Files, first.Files)
	}
	if again.Manifest != first.Manifest || again.Notes != first.Notes {
		t.Errorf("manifest or notes differ:\n%s\n%s\nvs\n%s\n%s", again.Manifest, again.Notes, first.Manifest, first.Notes)
	}
	if len(l.Chart.Templates) != 3 || !strings.Contains(string(l.Chart.Templates[0].Data)+string(l.Chart.Templates[1].Data)+string(l.Chart.Templates[2].Data), "randAlphaNum") {
		t.Error("Freeze changed the chart it was given")
	}
}

func TestFreeze_subchartsKeepTheirPaths(t *testing.T) {
	l := loadFixture(t, "zoo-webhook")
	first := renderStable(t, l, nil, nil)
	again := render(t, mustFreeze(t, l, first.Files), Values{}, RenderOptions{})
	if !maps.Equal(again.Files, first.Files) {
		t.Errorf("the frozen chart renders other files: %v vs %v", keysOf(again.Files), keysOf(first.Files))
	}
}

func sameElements(a, b []string) bool {
	return reflect.DeepEqual(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// sameObjects reports whether a and b apply equal objects, whatever their text.
func sameObjects(t *testing.T, a, b *Rendered) bool {
	t.Helper()
	am, err := keyedManifests(a, "review-x", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	bm, err := keyedManifests(b, "review-x", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return maps.Equal(am, bm)
}
