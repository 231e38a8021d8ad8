package manifest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Action is what a change does to one object.
type Action string

const (
	ActionAdd    Action = "add"
	ActionDelete Action = "delete"
	ActionUpdate Action = "update"
)

// diffContextLines is the number of unchanged lines shown around each
// change, as in diff -u.
const diffContextLines = 3

// Change is the difference in one object's manifest.
type Change struct {
	Key    string
	Action Action
	// UnifiedDiff is a unified diff of the manifest lines ("--- a/<key>",
	// "+++ b/<key>", hunks with 3 lines of context); /dev/null stands for
	// the missing side of an add or a delete.
	UnifiedDiff string
}

// DiffManifests compares two maps of manifests by key, as [Manifests]
// returns them, and returns one Change per key that was added, deleted or
// updated, sorted by key. Manifests that differ only in YAML form (key order,
// whitespace) are not updates.
func DiffManifests(before, after map[string]string) []Change {
	keys := make([]string, 0, len(before)+len(after))
	for key := range before {
		keys = append(keys, key)
	}
	for key := range after {
		if _, ok := before[key]; !ok {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)

	var changes []Change
	for _, key := range keys {
		old, hadOld := before[key]
		updated, hasNew := after[key]
		change := Change{Key: key}
		switch {
		case !hadOld:
			change.Action = ActionAdd
		case !hasNew:
			change.Action = ActionDelete
		case old == updated:
			continue
		default:
			if equal, err := YAMLEqual(old, updated); err == nil && equal {
				continue
			}
			change.Action = ActionUpdate
		}
		change.UnifiedDiff = unifiedDiff(key, old, updated, hadOld, hasNew)
		changes = append(changes, change)
	}
	return changes
}

func unifiedDiff(key, before, after string, hasBefore, hasAfter bool) string {
	fromFile, toFile := "a/"+key, "b/"+key
	if !hasBefore {
		fromFile = "/dev/null"
	}
	if !hasAfter {
		toFile = "/dev/null"
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        splitLines(before),
		B:        splitLines(after),
		FromFile: fromFile,
		ToFile:   toFile,
		Context:  diffContextLines,
	})
	if err != nil {
		// difflib fails only when writing to its buffer fails.
		return fmt.Sprintf("(diff unavailable: %v)\n", err)
	}
	return text
}

// splitLines splits text into lines that each end in "\n". Unlike
// difflib.SplitLines it adds no empty line after a final newline.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] += "\n"
	}
	return lines
}

// FormatChanges prints changes for a person reading a CI job log: each
// change under a "# <key> will be added|deleted|updated" line, then a summary
// line. No changes print "No changes.".
func FormatChanges(changes []Change) string {
	if len(changes) == 0 {
		return "No changes.\n"
	}
	var b strings.Builder
	counts := map[Action]int{}
	for _, change := range changes {
		counts[change.Action]++
		fmt.Fprintf(&b, "# %s will be %s\n", change.Key, pastTense(change.Action))
		b.WriteString(change.UnifiedDiff)
		if !strings.HasSuffix(change.UnifiedDiff, "\n") {
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%d to add, %d to update, %d to delete.\n", counts[ActionAdd], counts[ActionUpdate], counts[ActionDelete])
	return b.String()
}

func pastTense(action Action) string {
	switch action {
	case ActionAdd:
		return "added"
	case ActionDelete:
		return "deleted"
	case ActionUpdate:
		return "updated"
	default:
		return string(action)
	}
}
