package manifest

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// canary is the sensitive value planted in testdata/helm-output.yaml.
const canary = "canary-7Hq2xVb9Lm4P"

const fixtureNamespace = "review-x"

func loadFixture(t testing.TB) []Object {
	t.Helper()
	text, err := os.ReadFile("testdata/helm-output.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := SplitDocuments(string(text))
	if err != nil {
		t.Fatalf("SplitDocuments: %v", err)
	}
	return objs
}

// joinManifests prints manifests sorted by key, for golden files and
// whole-output searches.
func joinManifests(manifests map[string]string) string {
	keys := make([]string, 0, len(manifests))
	for key := range manifests {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, key := range keys {
		b.WriteString("### " + key + "\n" + manifests[key])
	}
	return b.String()
}

func findObject(objs []Object, kind, name string) Object {
	for _, obj := range objs {
		if obj["kind"] == kind && objectName(obj) == name {
			return obj
		}
	}
	panic("fixture has no " + kind + " " + name)
}

// changedLines returns the removed and added lines of a unified diff,
// without their markers and without the file headers.
func changedLines(diff string) (removed, added []string) {
	for line := range strings.Lines(diff) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "---"), strings.HasPrefix(line, "+++"):
		case strings.HasPrefix(line, "-"):
			removed = append(removed, line[1:])
		case strings.HasPrefix(line, "+"):
			added = append(added, line[1:])
		}
	}
	return removed, added
}

// testRedactionKey keys the markers of the manifests tests compare.
var testRedactionKey = []byte("test-key-0123456789abcdef0123456")
