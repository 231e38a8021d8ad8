package planreport

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// diffLine is one line of a changed object's diff: ' ' unchanged, '-'
// removed, '+' added. before and after are its indexes in the old and new
// manifest, -1 on the side it is not on.
type diffLine struct {
	op            byte
	text          string
	before, after int
}

// changedLines shows an object's changed lines and, above each, the YAML
// keys it sits under (its parent mappings and, for an item of a list, the
// item's name), in manifest order. The other unchanged lines fold into
// "# (N unchanged lines hidden)", the plan's wording. It returns the lines
// and how many were removed and added.
func changedLines(before, after string) (text string, removed, added int) {
	oldLines, newLines := splitLines(before), splitLines(after)
	diff := lineDiff(oldLines, newLines)
	shown := make([]bool, len(diff))
	atOld, atNew := indexes(diff)
	for i, l := range diff {
		switch l.op {
		case '-':
			removed++
			shown[i] = true
			markParents(oldLines, l.before, atOld, shown)
		case '+':
			added++
			shown[i] = true
			markParents(newLines, l.after, atNew, shown)
		}
	}
	return fold(diff, shown), removed, added
}

func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

func lineDiff(a, b []string) []diffLine {
	var out []diffLine
	for _, op := range difflib.NewMatcher(a, b).GetOpCodes() {
		if op.Tag == 'e' {
			for k := 0; k < op.I2-op.I1; k++ {
				out = append(out, diffLine{op: ' ', text: a[op.I1+k], before: op.I1 + k, after: op.J1 + k})
			}
			continue
		}
		for i := op.I1; i < op.I2; i++ {
			out = append(out, diffLine{op: '-', text: a[i], before: i, after: -1})
		}
		for j := op.J1; j < op.J2; j++ {
			out = append(out, diffLine{op: '+', text: b[j], before: -1, after: j})
		}
	}
	return out
}

// indexes maps each line of the old and the new manifest to its diff line.
func indexes(diff []diffLine) (atOld, atNew map[int]int) {
	atOld, atNew = map[int]int{}, map[int]int{}
	for i, l := range diff {
		if l.before >= 0 {
			atOld[l.before] = i
		}
		if l.after >= 0 {
			atNew[l.after] = i
		}
	}
	return atOld, atNew
}

// markParents marks the lines above lines[at] that hold it: each line less
// indented than the last one found, and the key line of a list that sits at
// its items' indentation (`containers:` above `- name: app`, as
// sigs.k8s.io/yaml writes lists). For an item of a list it also marks the
// item's `name:`, which tells the items apart.
func markParents(lines []string, at int, diffIndex map[int]int, shown []bool) {
	indent, item := indentOf(lines[at]), isListItem(lines[at])
	if item {
		markItemName(lines, at, diffIndex, shown)
	}
	for i := at - 1; i >= 0 && (indent > 0 || item); i-- {
		line := lines[i]
		if strings.TrimSpace(line) == "" {
			continue
		}
		n := indentOf(line)
		if n < indent || (item && n == indent && !isListItem(line)) {
			shown[diffIndex[i]] = true
			indent, item = n, isListItem(line)
			if item {
				markItemName(lines, i, diffIndex, shown)
			}
		}
	}
}

// markItemName marks the `name:` key of the list item starting at lines[at],
// when the item's first line is not already it.
func markItemName(lines []string, at int, diffIndex map[int]int, shown []bool) {
	itemIndent := indentOf(lines[at])
	if strings.HasPrefix(strings.TrimSpace(lines[at]), "- name:") {
		return
	}
	for i := at + 1; i < len(lines); i++ {
		n := indentOf(lines[i])
		if n <= itemIndent && strings.TrimSpace(lines[i]) != "" {
			return
		}
		if n == itemIndent+2 && strings.HasPrefix(strings.TrimSpace(lines[i]), "name:") {
			shown[diffIndex[i]] = true
			return
		}
	}
}

func indentOf(line string) int {
	return len(line) - len(strings.TrimLeft(line, " "))
}

func isListItem(line string) bool {
	t := strings.TrimLeft(line, " ")
	return t == "-" || strings.HasPrefix(t, "- ")
}

// fold writes the shown lines with their diff prefix and folds each run of
// hidden lines into one. A run of one line is shown: its fold would be no
// shorter.
func fold(diff []diffLine, shown []bool) string {
	var b strings.Builder
	for i := 0; i < len(diff); {
		if shown[i] {
			b.WriteByte(diff[i].op)
			b.WriteString(diff[i].text)
			b.WriteByte('\n')
			i++
			continue
		}
		end := i
		for end < len(diff) && !shown[end] {
			end++
		}
		if end-i == 1 {
			b.WriteString(" " + diff[i].text + "\n")
		} else {
			fmt.Fprintf(&b, " %s# (%d unchanged lines hidden)\n", strings.Repeat(" ", indentOf(diff[i].text)), end-i)
		}
		i = end
	}
	return b.String()
}
