package provider

import (
	"context"
	"crypto/sha256"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// The texts a process wrote are recorded in private, and the next process takes them from
// the state by that record; a record of texts the process did not write is cleared.
func TestRecordTexts_theNextProcessTakesThem(t *testing.T) {
	ctx := context.Background()
	objs := []manifest.Object{
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a-texts-test"}, "data": map[string]any{"k": "one"}},
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "b-texts-test"}, "data": map[string]any{"k": "two"}},
	}
	manifests, err := manifest.NewRedactor(nil, []byte("a key"), nil).Manifests(objs, "review-texts", nil)
	if err != nil {
		t.Fatal(err)
	}
	private := mapPrivate{}
	if d := recordTexts(ctx, private, manifests); d.HasError() {
		t.Fatal(d)
	}
	if len(private[textsPrivateKey]) == 0 {
		t.Fatal("no record of the texts written")
	}
	allKnown := func() bool {
		rec, ok := manifest.RecordWritten(manifests, buildIdentity())
		for _, d := range rec.Digests {
			if d == ([sha256.Size]byte{}) {
				return false
			}
		}
		return ok
	}
	manifest.ForgetWritten()
	if allKnown() {
		t.Fatal("texts forgotten are still known")
	}
	rememberTexts(ctx, private, manifests)
	if !allKnown() {
		t.Error("the state's texts were not taken by the record")
	}
	manifest.ForgetWritten()
	if d := recordTexts(ctx, private, manifests); d.HasError() {
		t.Fatal(d)
	}
	if _, ok := private[textsPrivateKey]; ok {
		t.Error("a record kept of texts this process did not write")
	}
	rememberTexts(ctx, mapPrivate{textsPrivateKey: []byte("not a record")}, manifests)
	if allKnown() {
		t.Error("texts taken by a record that cannot be read")
	}
}
