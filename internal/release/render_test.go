package release

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
)

// A plan without the cluster takes drawn values, their traces and the seed from what the last
// apply drew.
func TestRendering_drawnIsTheNextPlansPrior(t *testing.T) {
	applied := &Rendering{Rendered: &chart.Rendered{
		Files:   map[string]string{"web/templates/a.yaml": "kind: ConfigMap\n", "web/templates/secret.yaml": "kind: Secret\ndata: {password: eA==}\n"},
		Varying: []string{"web/templates/secret.yaml"},
		Traces:  map[string]string{"web/templates/secret.yaml|Secret|false|0|/data/password": "abc"},
	}}
	gen := applied.Drawn([]byte("seed"))
	offline := Prepare(context.Background(), nil, Inputs{Namespace: testNamespace, Name: "web", Generated: gen}, nil)
	want := chart.Prior{
		Documents: []chart.Document{{Source: "web/templates/secret.yaml", Text: applied.Rendered.Files["web/templates/secret.yaml"]}},
		Traces:    applied.Rendered.Traces,
	}
	if got := offline.Prior(); !reflect.DeepEqual(got, want) || string(gen.Seed) != "seed" {
		t.Errorf("Prior = %v, seed %q; want %v, seed %q", got, gen.Seed, want, "seed")
	}
	if again, err := gen.WithSeed(); err != nil || string(again.Seed) != "seed" {
		t.Errorf("a release's seed is drawn again: %q, %v", again.Seed, err)
	}
	if drawn, err := (Generated{}).WithSeed(); err != nil || len(drawn.Seed) != 32 {
		t.Errorf("a release without a seed gets %q, %v", drawn.Seed, err)
	}
}

// With the history read, drawn values come from what Helm recorded, and a release Helm does
// not know keeps none, whatever the private state says.
func TestRequest_priorFromTheHistory(t *testing.T) {
	kept := Generated{Documents: []chart.Document{{Source: "app/templates/old.yaml", Text: "kind: Secret\n"}}}
	cluster, _ := countingCluster(t, storedRelease(1, "deployed"))
	got := Prepare(context.Background(), cluster, Inputs{Namespace: testNamespace, Name: "app", Generated: kept}, nil).Prior()
	if len(got.Documents) != 1 || got.Documents[0].Source != "app/templates/cm.yaml" {
		t.Errorf("Prior with the history = %+v, want the recorded manifest's document", got.Documents)
	}
	gone, _ := countingCluster(t)
	if got := Prepare(context.Background(), gone, Inputs{Namespace: testNamespace, Name: "app", Generated: kept}, nil).Prior(); got.Documents != nil {
		t.Errorf("Prior of a release Helm does not know = %+v, want none", got.Documents)
	}
}

// A request splits the recorded manifest once, however many times it renders, and again for
// another revision.
func TestRequest_priorIsSplitOncePerRevision(t *testing.T) {
	req := PrepareWithHistory(nil, Inputs{Namespace: testNamespace, Name: "app"}, History{})
	req.History = HistoryOf(storedRelease(1, "deployed"))
	first, again := req.Prior(), req.Prior()
	if len(first.Documents) != 1 || len(again.Documents) != 1 || &first.Documents[0] != &again.Documents[0] {
		t.Fatalf("two Priors of one request split the manifest twice (%p, %p)", first.Documents, again.Documents)
	}
	next := storedRelease(2, "deployed")
	next.Manifest = "---\n# Source: app/templates/other.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: app\n"
	req.History = HistoryOf(append(req.History.Records, next)...)
	if got := req.Prior(); len(got.Documents) != 1 || got.Documents[0].Source != "app/templates/other.yaml" {
		t.Errorf("Prior after the history gained revision 2 = %+v, want that revision's document", got.Documents)
	}
}

// An apply that drew nothing is recorded as such through the private state's JSON, so the
// next plan draws anew where it holds an input the chart draws a default for; a record without
// traces (none kept) reads as before.
func TestGenerated_anApplyThatDrewNothingStaysRecorded(t *testing.T) {
	applied := &Rendering{Rendered: &chart.Rendered{Traces: map[string]string{}}}
	encoded, err := json.Marshal(applied.Drawn([]byte("seed")))
	if err != nil {
		t.Fatal(err)
	}
	var read Generated
	if err := json.Unmarshal(encoded, &read); err != nil {
		t.Fatal(err)
	}
	offline := Prepare(context.Background(), nil, Inputs{Namespace: testNamespace, Name: "web", Generated: read}, nil)
	if got := offline.Prior().Traces; got == nil || len(got) != 0 {
		t.Errorf("Prior().Traces = %#v from %s, want empty, not nil", got, encoded)
	}
	var none Generated
	if err := json.Unmarshal([]byte(`{"seed":"c2VlZA=="}`), &none); err != nil || none.Traces != nil {
		t.Errorf("a record without traces reads as %#v, %v; want nil", none.Traces, err)
	}
}
