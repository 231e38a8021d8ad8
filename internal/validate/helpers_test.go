package validate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// objectsOf parses YAML documents into objects keyed by manifest key, as the provider keys them.
func objectsOf(t testing.TB, text string) []Object {
	t.Helper()
	objs, err := manifest.SplitDocuments(text)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Object, 0, len(objs))
	for _, o := range objs {
		out = append(out, Object{Key: manifest.Key(o, "default"), Source: "checks/templates/test.yaml", Object: o})
	}
	return out
}

func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustVersion(t testing.TB, s string) Version {
	t.Helper()
	v, err := ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
