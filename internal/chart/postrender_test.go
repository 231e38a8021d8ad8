package chart

import (
	"context"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// Helm 4 post-renders an install's hooks and its other objects apart: the manifests of
// either stream are the rendering's, with the stream's objects in place of the rendering's
// of the same part, so a hook Helm renders otherwise shows, and a test hook, which the
// rendering leaves out, is left out of the stream's too.
func TestPostRenderedManifests_hooksAndObjectsApart(t *testing.T) {
	l := loadFixture(t, "zoo-podinfo")
	red := RedactionOptions{Namespace: "review-x"}
	out, err := renderRedacted(context.Background(), l, Values{}, RenderOptions{ReleaseName: "web", Namespace: "review-x"}, red)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Rendered.Hooks) == 0 || len(out.Rendered.Objects) == 0 {
		t.Fatalf("the fixture renders %d hooks and %d objects; the test needs both", len(out.Rendered.Hooks), len(out.Rendered.Objects))
	}
	testHooks, err := manifest.SplitDocuments(out.Rendered.Files["zoo-podinfo/templates/tests/test-connection.yaml"])
	if err != nil || len(testHooks) == 0 {
		t.Fatalf("the fixture's test hooks: %v, %v", testHooks, err)
	}
	for name, stream := range map[string][]manifest.Object{
		"objects":                 out.Rendered.Objects,
		"hooks":                   out.Rendered.Hooks,
		"hooks and test hooks":    append(cloneObjects(out.Rendered.Hooks), testHooks...),
		"objects, hooks together": append(cloneObjects(out.Rendered.Objects), out.Rendered.Hooks...),
	} {
		got, err := out.PostRenderedManifests(stream, red)
		if err != nil || !maps.Equal(got, out.Manifests) {
			t.Errorf("%s: PostRenderedManifests = %v (%v), want the rendering's manifests %v", name, keysOf(got), err, keysOf(out.Manifests))
		}
	}
	changed := cloneObjects(out.Rendered.Hooks)
	spec := changed[0]["spec"].(map[string]any)
	spec["backoffLimit"] = int64(7)
	got, err := out.PostRenderedManifests(changed, red)
	if err != nil {
		t.Fatal(err)
	}
	changes := manifest.DiffManifests(out.Manifests, got)
	if len(changes) != 1 || !strings.Contains(changes[0].UnifiedDiff, "+  backoffLimit: 7") {
		t.Errorf("a hook rendered otherwise shows as %+v, want its one change", changes)
	}
}

// Freezing writes a template whose YAML Helm 4's post-render path would read otherwise as the
// objects it renders, with no anchor, duplicate key or kept block scalar left, and leaves every
// other template's output as it is: the frozen chart renders the same objects and hooks.
func TestFreeze_rewritesYAMLHelmWouldChange(t *testing.T) {
	for _, fixture := range []string{"yaml-edges", "web", "zoo-podinfo"} {
		t.Run(fixture, func(t *testing.T) {
			l := loadFixture(t, fixture)
			rendered := render(t, l, Values{}, RenderOptions{})
			frozen := mustFreeze(t, l, rendered.Files)
			again := render(t, frozen, Values{}, RenderOptions{})
			if !reflect.DeepEqual(again.Objects, rendered.Objects) || !reflect.DeepEqual(again.Hooks, rendered.Hooks) {
				t.Errorf("the frozen chart renders\n%v\n%v\nthe chart\n%v\n%v", again.Objects, again.Hooks, rendered.Objects, rendered.Hooks)
			}
			for _, tmpl := range frozen.Chart.Templates {
				text := string(tmpl.Data)
				out := rendered.Files[fixture+"/"+tmpl.Name]
				rewritten := text != literalTemplate(out)
				// Every template of yaml-edges but its test hook, which Helm 4 does not
				// post-render, holds YAML Helm 4 would write again otherwise.
				edges := fixture == "yaml-edges" && tmpl.Name != "templates/clipped-test.yaml"
				switch {
				case edges && (!rewritten || manifest.MayChangeWhenRewritten(text)):
					t.Errorf("%s is frozen as YAML Helm 4 writes again otherwise:\n%s", tmpl.Name, text)
				case !edges && rewritten:
					t.Errorf("%s is frozen otherwise than as its output:\n%s", tmpl.Name, text)
				}
			}
		})
	}
}

func cloneObjects(objs []manifest.Object) []manifest.Object {
	out := make([]manifest.Object, len(objs))
	for i, obj := range objs {
		out[i] = manifest.DeepCopy(obj).(manifest.Object)
	}
	return out
}

// A block scalar ending a template with no newline after it keeps its final newline in the
// objects Helm creates, hooks and test hooks too (Helm reads a hook's manifest line by line, each
// line ended by one), and in the frozen chart's rendering, which Helm 4 post-renders.
func TestRender_blockScalarEndingAHookKeepsItsNewline(t *testing.T) {
	l := loadFixture(t, "yaml-edges")
	rendered := render(t, l, Values{}, RenderOptions{})
	frozen := render(t, mustFreeze(t, l, rendered.Files), Values{}, RenderOptions{})
	want := "{\n  \"message\": \"hello\"\n}\n"
	for name, r := range map[string]*Rendered{"chart": rendered, "frozen chart": frozen} {
		found := map[string]bool{}
		for _, obj := range append(append(cloneObjects(r.Objects), r.Hooks...), r.TestHooks...) {
			meta, _ := obj["metadata"].(map[string]any)
			data, _ := obj["data"].(map[string]any)
			switch n, _ := meta["name"].(string); n {
			case "web-clipped-last", "web-clipped-hook", "web-clipped-test":
				found[n] = true
				if data["global"] != want {
					t.Errorf("%s: %s holds global %q, want %q", name, n, data["global"], want)
				}
			}
		}
		if len(found) != 3 {
			t.Errorf("%s: found %v of the three ConfigMaps ending in a block scalar", name, found)
		}
	}
}
