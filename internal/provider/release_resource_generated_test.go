package provider

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
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
