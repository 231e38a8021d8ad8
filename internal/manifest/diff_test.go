package manifest

import (
	"strings"
	"testing"
)

func TestDiffManifests_addDeleteUpdateSortedByKey(t *testing.T) {
	before := map[string]string{
		"ConfigMap/a":         "data:\n  x: \"1\"\n",
		"ConfigMap/gone":      "data:\n  y: \"2\"\n",
		"Deployment.apps/web": "a: 1\nb: 2\n",
		"Service/same":        "spec: {}\n",
	}
	after := map[string]string{
		"ConfigMap/a":         "data:\n  x: \"2\"\n",
		"ConfigMap/new":       "data:\n  z: \"3\"\n",
		"Deployment.apps/web": "b: 2\na: 1\n",
		"Service/same":        "spec: {}\n",
	}
	changes := DiffManifests(before, after)
	want := []struct {
		key    string
		action Action
		diff   string
	}{
		{"ConfigMap/a", ActionUpdate, "--- a/ConfigMap/a\n+++ b/ConfigMap/a\n@@ -1,2 +1,2 @@\n data:\n-  x: \"1\"\n+  x: \"2\"\n"},
		{"ConfigMap/gone", ActionDelete, "--- a/ConfigMap/gone\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-data:\n-  y: \"2\"\n"},
		{"ConfigMap/new", ActionAdd, "--- /dev/null\n+++ b/ConfigMap/new\n@@ -0,0 +1,2 @@\n+data:\n+  z: \"3\"\n"},
	}
	if len(changes) != len(want) {
		t.Fatalf("got %d changes, want %d:\n%s", len(changes), len(want), FormatChanges(changes))
	}
	for i, w := range want {
		t.Run(w.key, func(t *testing.T) {
			c := changes[i]
			if c.Key != w.key || c.Action != w.action || c.UnifiedDiff != w.diff {
				t.Errorf("got %s %s\n%s\nwant %s %s\n%s", c.Action, c.Key, c.UnifiedDiff, w.action, w.key, w.diff)
			}
		})
	}
}

func TestDiffManifests_contextIsThreeLines(t *testing.T) {
	lines := func(changed int) string {
		var b strings.Builder
		for i := 1; i <= 20; i++ {
			if i == changed {
				b.WriteString("line: changed\n")
			} else {
				b.WriteString("line" + strings.Repeat("x", i) + ": same\n")
			}
		}
		return b.String()
	}
	changes := DiffManifests(map[string]string{"K/k": lines(0)}, map[string]string{"K/k": lines(10)})
	if len(changes) != 1 {
		t.Fatalf("got %d changes", len(changes))
	}
	diff := changes[0].UnifiedDiff
	if !strings.Contains(diff, "@@ -7,7 +7,7 @@") {
		t.Errorf("want one hunk with 3 lines of context around line 10, got:\n%s", diff)
	}
}

func TestFormatChanges_readableSummary(t *testing.T) {
	tests := []struct {
		desc    string
		changes []Change
		want    string
	}{
		{"no changes", nil, "No changes.\n"},
		{
			"one of each",
			DiffManifests(
				map[string]string{"ConfigMap/a": "x: 1\n", "ConfigMap/b": "y: 1\n"},
				map[string]string{"ConfigMap/a": "x: 2\n", "ConfigMap/c": "z: 1\n"},
			),
			"# ConfigMap/a will be updated\n--- a/ConfigMap/a\n+++ b/ConfigMap/a\n@@ -1 +1 @@\n-x: 1\n+x: 2\n\n" +
				"# ConfigMap/b will be deleted\n--- a/ConfigMap/b\n+++ /dev/null\n@@ -1 +0,0 @@\n-y: 1\n\n" +
				"# ConfigMap/c will be added\n--- /dev/null\n+++ b/ConfigMap/c\n@@ -0,0 +1 @@\n+z: 1\n\n" +
				"1 to add, 1 to update, 1 to delete.\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := FormatChanges(tt.changes); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
