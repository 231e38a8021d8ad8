package helmrelease

import (
	"bytes"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	release "helm.sh/helm/v4/pkg/release/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// Helm 4 hands a post-renderer every object annotated with the template it came from; the
// check compares the objects as the chart rendered them.
const (
	annotatedStream = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  annotations:\n" +
		"    postrenderer.helm.sh/postrender-filename: web/templates/settings.yaml\n" +
		"---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n" +
		"    team: web\n    postrenderer.helm.sh/postrender-filename: web/templates/web.yaml\n"
	renderedStream = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n" +
		"---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    team: web\n"
)

// Helm 4 hands a List's items over as documents of their own, and an alias in one then names
// an anchor of another (helm#32203).
const aliasedStream = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n  labels: &labels\n    app: web\n  annotations:\n" +
	"    postrenderer.helm.sh/postrender-filename: web/templates/list.yaml\ndata: &data\n  script: |+\n    echo\n\n" +
	"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n  labels: *labels\n  annotations:\n" +
	"    postrenderer.helm.sh/postrender-filename: web/templates/list.yaml\ndata: *data\n"

func TestPlanCheck(t *testing.T) {
	planned := map[string]string{
		"ConfigMap/settings":  "apiVersion: v1\nkind: ConfigMap\ndata:\n  mode: review\n  token: a1\n",
		"Deployment.apps/web": "apiVersion: apps/v1\nkind: Deployment\n",
	}
	tests := []struct {
		name       string
		applied    map[string]string
		wantObject string
		wantChange string
	}{
		{name: "same", applied: planned},
		{
			name:       "random value differs",
			applied:    map[string]string{"ConfigMap/settings": "apiVersion: v1\nkind: ConfigMap\ndata:\n  mode: review\n  token: b2\n", "Deployment.apps/web": planned["Deployment.apps/web"]},
			wantObject: "ConfigMap/settings", wantChange: "changed",
		},
		{
			name:       "object only at apply",
			applied:    map[string]string{"ConfigMap/settings": planned["ConfigMap/settings"], "Deployment.apps/web": planned["Deployment.apps/web"], "Secret/extra": "kind: Secret\n"},
			wantObject: "Secret/extra", wantChange: "not in the plan",
		},
		{
			name:       "object missing at apply",
			applied:    map[string]string{"Deployment.apps/web": planned["Deployment.apps/web"]},
			wantObject: "ConfigMap/settings", wantChange: "missing at apply",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := manifest.SplitDocuments(renderedStream)
			if err != nil {
				t.Fatal(err)
			}
			check := &PlanCheck{Planned: planned, Manifests: func(objs []manifest.Object) (map[string]string, error) {
				if !reflect.DeepEqual(objs, want) {
					t.Errorf("Manifests got %v, want Helm's objects without its annotation %v", objs, want)
				}
				return tt.applied, nil
			}}
			out, err := check.Run(bytes.NewBufferString(annotatedStream))
			if tt.wantObject == "" {
				if err != nil {
					t.Fatalf("Run = %v", err)
				}
				sameObjects(t, out.String(), annotatedStream)
				return
			}
			var mismatch *PlanMismatchError
			if !errors.As(err, &mismatch) {
				t.Fatalf("Run error = %v, want a *PlanMismatchError", err)
			}
			if mismatch.Object != tt.wantObject || mismatch.Change != tt.wantChange {
				t.Errorf("mismatch = %s (%s), want %s (%s)", mismatch.Object, mismatch.Change, tt.wantObject, tt.wantChange)
			}
			if tt.wantChange == "changed" && (!strings.Contains(mismatch.Diff, "-  token: a1") || !strings.Contains(mismatch.Diff, "+  token: b2") || strings.Contains(mismatch.Diff, "apiVersion")) {
				t.Errorf("diff shows more or less than the changed line:\n%s", mismatch.Diff)
			}
		})
	}
}

// A stream whose documents alias each other's anchors is read as the List it was, and handed
// back as YAML Helm writes again as it is, each object with its filename annotation.
func TestPlanCheck_aliasesBetweenDocuments(t *testing.T) {
	data := map[string]any{"script": "echo\n\n"}
	check := &PlanCheck{Planned: map[string]string{}, Manifests: func(objs []manifest.Object) (map[string]string, error) {
		if len(objs) != 2 {
			t.Fatalf("Manifests got %d objects, want 2", len(objs))
		}
		for i, name := range []string{"one", "two"} {
			metadata, _ := objs[i]["metadata"].(map[string]any)
			if metadata["name"] != name || metadata["annotations"] != nil || !reflect.DeepEqual(objs[i]["data"], data) {
				t.Errorf("object %d = %v, want %s with data %v and no annotations", i, objs[i], name, data)
			}
		}
		return map[string]string{}, nil
	}}
	out, err := check.Run(bytes.NewBufferString(aliasedStream))
	if err != nil {
		t.Fatal(err)
	}
	sameObjects(t, out.String(), aliasedStream)
}

// sameObjects fails unless the stream Run returned holds the objects of the stream Helm
// handed it, annotations included, with no YAML Helm would write again otherwise.
func sameObjects(t *testing.T, returned, handed string) {
	t.Helper()
	want, err := manifest.SplitAliasedDocuments(handed)
	if err != nil {
		t.Fatal(err)
	}
	got, err := manifest.SplitDocuments(returned)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Run returned\n%s\nwant the objects of\n%s", returned, handed)
	}
	if manifest.MayChangeWhenRewritten(returned) {
		t.Errorf("Run returned YAML Helm would write again otherwise:\n%s", returned)
	}
}

// Helm post-renders the hooks too, as the release's installs and upgrades run it: a hook the
// plan did not show stops the install.
func TestPlanCheck_helmHandsItTheHooks(t *testing.T) {
	ch := &chartv2.Chart{
		Metadata: &chartv2.Metadata{APIVersion: chartv2.APIVersionV2, Name: "hooked", Version: "0.1.0"},
		Templates: []*common.File{
			{Name: "templates/config.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\n")},
			{Name: "templates/hook.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hook\n  annotations:\n    helm.sh/hook: pre-install\n")},
		},
	}
	// As the provider's: the stream's objects, and the rendering's ConfigMap where the stream
	// holds only hooks.
	byName := func(objs []manifest.Object) (map[string]string, error) {
		out := map[string]string{"config": "rendered"}
		for _, obj := range objs {
			out[obj["metadata"].(map[string]any)["name"].(string)] = "rendered"
		}
		return out, nil
	}
	var streams [][]string
	check := &PlanCheck{Planned: map[string]string{"config": "rendered"}, Manifests: func(objs []manifest.Object) (map[string]string, error) {
		got, err := byName(objs)
		streams = append(streams, slices.Sorted(maps.Keys(got)))
		return got, err
	}}
	_, err := dryRunInstall(ch, check)
	var mismatch *PlanMismatchError
	if !errors.As(err, &mismatch) || mismatch.Object != "hook" || mismatch.Change != "not in the plan" {
		t.Fatalf("install with a hook the plan did not show = %v (streams %v), want the hook not in the plan", err, streams)
	}
}

// What Run hands back goes through Helm's parsing and writing as it is: the release's
// manifest reads as the objects Helm handed over, a string ending in blank lines included.
func TestPlanCheck_helmAppliesWhatItHandsBack(t *testing.T) {
	// stringData is written last: the string ends the document.
	kept := manifest.Object{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "kept"},
		"stringData": map[string]any{"script": "echo last\n\n\n"}}
	text, err := manifest.RenderRewritable(kept)
	if err != nil {
		t.Fatal(err)
	}
	ch := &chartv2.Chart{
		Metadata:  &chartv2.Metadata{APIVersion: chartv2.APIVersionV2, Name: "kept", Version: "0.1.0"},
		Templates: []*common.File{{Name: "templates/kept.yaml", Data: []byte(text)}},
	}
	check := &PlanCheck{Planned: map[string]string{}, Manifests: func([]manifest.Object) (map[string]string, error) {
		return map[string]string{}, nil
	}}
	installed, err := dryRunInstall(ch, check)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.SplitDocuments(installed.Manifest)
	if err != nil || len(objs) != 1 || !reflect.DeepEqual(objs[0], kept) {
		t.Errorf("Helm applies %v (%v), want %v", objs, err, kept)
	}
}

// dryRunInstall installs ch client-side only, post-rendered by check as the release's
// installs are.
func dryRunInstall(ch *chartv2.Chart, check *PlanCheck) (*release.Release, error) {
	install := action.NewInstall(&action.Configuration{})
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName = ch.Name()
	install.Namespace = "review-x"
	install.PostRenderer = check
	install.PostRenderStrategy = postRenderStrategy
	installed, err := install.Run(ch, nil)
	if err != nil {
		return nil, err
	}
	return asRelease(installed)
}
