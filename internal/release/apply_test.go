package release

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// The apply accepts what the plan left unknown, and only that.
func TestShown_check(t *testing.T) {
	shown := Shown{Manifests: map[string]string{"ConfigMap/a": "a"}, UnknownKeys: []string{"Secret/s"}}
	tests := []struct {
		name    string
		applied map[string]string
		want    string
	}{
		{"as planned", map[string]string{"ConfigMap/a": "a", "Secret/s": "drawn"}, ""},
		{"known object changed", map[string]string{"ConfigMap/a": "b", "Secret/s": "drawn"}, "ConfigMap/a"},
		{"unknown object missing", map[string]string{"ConfigMap/a": "a"}, "Secret/s"},
		{"object not in the plan", map[string]string{"ConfigMap/a": "a", "Secret/s": "drawn", "ConfigMap/new": "n"}, "ConfigMap/new"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := shown.check(tt.applied)
			var mismatch *helmrelease.PlanMismatchError
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("check = %v, want nil", err)
			case tt.want != "" && (!errors.As(err, &mismatch) || mismatch.Object != tt.want):
				t.Errorf("check = %v, want a mismatch on %s", err, tt.want)
			}
		})
	}
	if err := (Shown{Unknown: true}).check(map[string]string{"ConfigMap/x": "x"}); err != nil {
		t.Errorf("with manifests unknown, check = %v", err)
	}
}

// recordingWriter is a Writer that records what the apply asked of the cluster, in order, and
// fails the step named by failAt.
type recordingWriter struct {
	calls  []string
	failAt string
	spec   helmrelease.Spec
	next   helmrelease.Next
}

var errRefused = errors.New("refused")

func (w *recordingWriter) call(name string) error {
	w.calls = append(w.calls, name)
	if name == w.failAt {
		return errRefused
	}
	return nil
}

func (w *recordingWriter) WaitEstablished(_ context.Context, names []string, _ time.Duration) error {
	return w.call("wait " + strings.Join(names, ","))
}

func (w *recordingWriter) ApplyDefinition(_ context.Context, crd manifest.Object) error {
	return w.call("define " + manifest.Key(crd, ""))
}

func (w *recordingWriter) ReplaceImmutable(_ context.Context, keys []string, objs []manifest.Object, _ time.Duration) ([]string, error) {
	for i, o := range objs {
		if meta, _ := o["metadata"].(map[string]any); meta["namespace"] != testNamespace {
			return nil, fmt.Errorf("%s is handed over without the release's namespace", keys[i])
		}
	}
	if err := w.call("replace " + strings.Join(keys, ",")); err != nil {
		return nil, err
	}
	return keys, nil
}

func (w *recordingWriter) Apply(_ context.Context, spec helmrelease.Spec, next helmrelease.Next) (*helmrelease.Outcome, error) {
	w.spec, w.next = spec, next
	if err := w.call("helm"); err != nil {
		return &helmrelease.Outcome{}, err
	}
	return &helmrelease.Outcome{Release: &helmv1.Release{Version: next.Target.Revision, Info: &helmv1.Info{Status: rcommon.StatusDeployed}}}, nil
}

// withCRDsInputs are the inputs of release "widgets" of the with-crds fixture chart.
func withCRDsInputs() Inputs {
	return Inputs{
		Namespace: testNamespace, Name: "widgets",
		Chart:              chart.Source{Chart: chartserver.FixtureChart("with-crds")},
		Capabilities:       Capabilities{IsNamespaced: manifest.BuiltinIsNamespaced},
		Redactor:           manifest.NewRedactor(nil, nil, nil),
		Definitions:        []validate.Object{{Key: definitionKeyPrefix + "gadgets.example.com"}},
		ReplaceDefinitions: true,
	}
}

// An apply waits for crds_from's definitions, replaces the chart's own (create_replace) and
// waits for them, replaces what only immutable fields keep from changing on an upgrade, and
// then hands Helm the frozen chart with the settings; a step that fails stops the ones after
// it, and says which it was.
func TestRequest_applySequence(t *testing.T) {
	ctx := context.Background()
	settings := Settings{Atomic: true, Timeout: time.Minute, MaxHistory: 3, Description: "deployed by a pipeline", ForceReplace: true}
	crd := definitionKeyPrefix + "widgets.test.gitlabk8s.io"

	cluster, _ := countingCluster(t)
	w := &recordingWriter{}
	done, err := Prepare(ctx, cluster, withCRDsInputs(), nil).Apply(ctx, nil, Shown{Unknown: true}, settings, w)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"wait gadgets.example.com", "define " + crd, "wait widgets.test.gitlabk8s.io", "helm"}
	if !slices.Equal(w.calls, want) {
		t.Errorf("an install asked %q, want %q (nothing replaced when creating)", w.calls, want)
	}
	if w.spec.Name != "widgets" || w.spec.Namespace != testNamespace || !w.spec.Atomic || w.spec.MaxHistory != 3 ||
		w.spec.Description != settings.Description || w.spec.Chart == nil || w.spec.Capabilities == nil || w.spec.PostRenderer == nil {
		t.Errorf("Helm was handed %+v, want the release, the frozen chart and the settings", w.spec)
	}
	if done.Revision != 1 || done.Status != rcommon.StatusDeployed || len(done.Manifests) == 0 || len(done.Generated.Seed) != 32 {
		t.Errorf("applied = revision %d, %s, %d manifests, seed %x; want revision 1 deployed with its manifests and a seed",
			done.Revision, done.Status, len(done.Manifests), done.Generated.Seed)
	}

	stored := storedRelease(1, rcommon.StatusDeployed)
	stored.Name = "widgets"
	upgraded := deployedAs(done.Manifests, 1)
	for _, tt := range []struct {
		failAt string
		step   ApplyStep
		calls  int
	}{
		{"", "", 5},
		{"wait gadgets.example.com", StepDefinitions, 1},
		{"define " + crd, StepReplaceDefinition, 2},
		{"wait widgets.test.gitlabk8s.io", StepDefinitionsReplaced, 3},
		{"replace Widget.test.gitlabk8s.io/widgets", StepReplaceObject, 4},
		{"helm", StepHelm, 5},
	} {
		cluster, _ := countingCluster(t, stored)
		w := &recordingWriter{failAt: tt.failAt}
		done, err := Prepare(ctx, cluster, withCRDsInputs(), nil).Apply(ctx, upgraded, Shown{Unknown: true}, settings, w)
		var failed *ApplyError
		switch {
		case tt.step == "" && err != nil:
			t.Errorf("upgrade: %v", err)
		case tt.step == "" && !slices.Equal(done.Replaced, []string{"Widget.test.gitlabk8s.io/widgets"}):
			t.Errorf("upgrade replaced %q, want the Widget the writer replaced", done.Replaced)
		case tt.step != "" && (!errors.As(err, &failed) || failed.Step != tt.step || !errors.Is(err, errRefused)):
			t.Errorf("failing %q = %v, want an ApplyError at %s", tt.failAt, err, tt.step)
		}
		if len(w.calls) != tt.calls {
			t.Errorf("failing %q asked %q, want the first %d steps", tt.failAt, w.calls, tt.calls)
		}
	}

	w = &recordingWriter{}
	shown := Shown{Manifests: map[string]string{"Widget.test.gitlabk8s.io/widgets": "shown by the plan"}}
	_, err = Prepare(ctx, cluster, withCRDsInputs(), nil).Apply(ctx, nil, shown, settings, w)
	var mismatch *helmrelease.PlanMismatchError
	if !errors.As(err, &mismatch) || len(w.calls) != 0 {
		t.Errorf("an apply that renders other than the plan = %v after %q, want a mismatch before anything is asked", err, w.calls)
	}
}
