package provider

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
)

// mapPrivate is private state kept in a map.
type mapPrivate map[string][]byte

func (p mapPrivate) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	return p[key], nil
}

func (p mapPrivate) SetKey(_ context.Context, key string, value []byte) diag.Diagnostics {
	if len(value) == 0 {
		delete(p, key)
	} else {
		p[key] = value
	}
	return nil
}

// A plan without the cluster takes drawn values, their traces and the seed from what the last
// apply kept.
func TestGeneratedRecordRoundTrip(t *testing.T) {
	rendered := &chart.Rendered{
		Files:   map[string]string{"web/templates/a.yaml": "kind: ConfigMap\n", "web/templates/secret.yaml": "kind: Secret\ndata: {password: eA==}\n"},
		Varying: []string{"web/templates/secret.yaml"},
		Traces:  map[string]string{"web/templates/secret.yaml|Secret|false|0|/data/password": "abc"},
	}
	private := mapPrivate{}
	if d := writeGenerated(context.Background(), private, []byte("seed"), rendered); d.HasError() {
		t.Fatal(d)
	}
	m := &releaseModel{Name: types.StringValue("web"), Namespace: types.StringValue("review-x")}
	rec := readGenerated(context.Background(), private)
	got := rec.prior(context.Background(), &renderEnv{}, m)
	want := chart.Prior{
		Documents: []chart.Document{{Source: "web/templates/secret.yaml", Text: rendered.Files["web/templates/secret.yaml"]}},
		Traces:    rendered.Traces,
	}
	if !reflect.DeepEqual(got, want) || string(rec.Seed) != "seed" {
		t.Errorf("prior = %v, seed %q; want %v, seed %q", got, rec.Seed, want, "seed")
	}
	if again, ok := rec.withSeed(new(diag.Diagnostics)); !ok || string(again.Seed) != "seed" {
		t.Errorf("a release's seed is drawn again: %q", again.Seed)
	}
	if drawn, ok := (generatedRecord{}).withSeed(new(diag.Diagnostics)); !ok || len(drawn.Seed) != 32 {
		t.Errorf("a release without a seed gets %q", drawn.Seed)
	}
}

// The apply accepts what the plan left unknown, and only that.
func TestCheckPlanned(t *testing.T) {
	plan := types.MapValueMust(types.StringType, map[string]attr.Value{
		"ConfigMap/a": types.StringValue("a"),
		"Secret/s":    types.StringUnknown(),
	})
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
			err := checkPlanned(plan, tt.applied)
			var mismatch *helmrelease.PlanMismatchError
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("checkPlanned = %v, want nil", err)
			case tt.want != "" && (!errors.As(err, &mismatch) || mismatch.Object != tt.want):
				t.Errorf("checkPlanned = %v, want a mismatch on %s", err, tt.want)
			}
		})
	}
	if err := checkPlanned(types.MapUnknown(types.StringType), map[string]string{"ConfigMap/x": "x"}); err != nil {
		t.Errorf("with manifests unknown, checkPlanned = %v", err)
	}
}
