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
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
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

// What the apply drew is read back as it was written.
func TestGeneratedRecordRoundTrip(t *testing.T) {
	written := release.Generated{
		Seed:      []byte("seed"),
		Traces:    map[string]string{"web/templates/secret.yaml|Secret|false|0|/data/password": "abc"},
		Documents: []chart.Document{{Source: "web/templates/secret.yaml", Text: "kind: Secret\ndata: {password: eA==}\n"}},
	}
	private := mapPrivate{}
	if d := writeGenerated(context.Background(), private, written, noRelease); d.HasError() {
		t.Fatal(d)
	}
	if got := readGenerated(context.Background(), private); !reflect.DeepEqual(got, written) {
		t.Errorf("readGenerated = %+v, want %+v", got, written)
	}
	private[generatedPrivateKey] = []byte("{not json")
	if got := readGenerated(context.Background(), private); got.Seed != nil || got.Documents != nil {
		t.Errorf("an unreadable record reads as %+v, want none", got)
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
