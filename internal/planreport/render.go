package planreport

import (
	"fmt"
	"html"
	"strconv"
	"strings"
)

// NoteSizeLimit is GitLab's limit of a note's length, in characters.
const NoteSizeLimit = 1_000_000

// Options say what the report is of and where the whole of it is.
type Options struct {
	// Environment names the state the plan is of, e.g. "review/my-feature"
	// ($CI_ENVIRONMENT_NAME). It heads the report and is part of its Marker.
	Environment string
	// Commit is the commit the plan is of, e.g. $CI_COMMIT_SHORT_SHA. Optional.
	Commit string
	// JobURL is the plan job's page, e.g. $CI_JOB_URL. Optional.
	JobURL string
	// FullReportURL is where the whole report is (the job's artifact), linked
	// from a report cut at Limit. Optional.
	FullReportURL string
	// Limit is the most characters the report may have; 0 is no limit.
	Limit int
}

// Marker is the hidden first line of the report of environment, by which a
// later pipeline finds the note to update.
func Marker(environment string) string {
	// Quoted, so no environment name can end the HTML comment early.
	return "<!-- gitlabk8s-plan environment=" + strings.ReplaceAll(strconv.Quote(environment), "--", `-\u002d`) + " -->"
}

// Render writes the report of plan as Markdown: the hidden Marker, a
// heading with a summary line per resource that changes, then per resource
// its objects, each in a collapsed section. A plan that changes no object
// is one line.
func Render(plan Plan, opts Options) string {
	head := Marker(opts.Environment) + "\n"
	if plan.Empty() {
		return head + fmt.Sprintf("**gitlabk8s plan of `%s`%s: no changes.** The Kubernetes objects match the configuration.\n", opts.Environment, commitSuffix(opts))
	}
	head += fmt.Sprintf("### gitlabk8s plan of `%s`%s\n\n", opts.Environment, commitSuffix(opts))
	changing := changingResources(plan)
	for _, res := range changing {
		head += "- " + summaryLine(res) + "\n"
	}
	if len(plan.Others) > 0 {
		head += "- other resources: " + othersLine(plan.Others) + "\n"
	}
	head += "\n"

	var blocks []block
	for _, res := range changing {
		blocks = append(blocks, resourceBlocks(res)...)
	}
	return head + fit(blocks, opts, len(head)) + footer(opts)
}

func commitSuffix(opts Options) string {
	if opts.Commit == "" {
		return ""
	}
	return " at " + opts.Commit
}

func footer(opts Options) string {
	if opts.JobURL == "" {
		return ""
	}
	return fmt.Sprintf("\n<sub>From the [plan job](%s). The same objects, lines and markers as its plan.</sub>\n", opts.JobURL)
}

// changingResources are the resources the plan does something to, the
// environments' first: replacing or destroying one deletes its namespace.
func changingResources(plan Plan) []Resource {
	var envs, releases []Resource
	for _, res := range plan.Resources {
		if res.Action == ActionNoop && len(res.Objects) == 0 {
			continue
		}
		if res.Environment {
			envs = append(envs, res)
		} else {
			releases = append(releases, res)
		}
	}
	return append(envs, releases...)
}

// summaryLine is "app: 2 objects changed, 1 added", and the plan's wording
// when the resource is not just updated.
func summaryLine(res Resource) string {
	line := "**" + res.Name + "**"
	if res.Environment {
		line += " (environment)"
		if res.Action == ActionDelete || res.Action == ActionReplace {
			// Its namespace goes, and everything in it: the one change a reviewer must not miss.
			line = ":warning: " + line
		}
	}
	line += ": " + objectCounts(res)
	if res.Action != ActionUpdate && res.Action != ActionNoop {
		line += fmt.Sprintf("; `%s` %s", res.Address, res.Action.phrase())
		if len(res.ForcedBy) > 0 {
			line += " (forced by `" + strings.Join(res.ForcedBy, "`, `") + "`)"
		}
	}
	return line
}

func objectCounts(res Resource) string {
	if res.ObjectsUnknown {
		return "objects known after apply"
	}
	n := counts(res.Objects)
	var parts []string
	for _, change := range []ObjectChange{ObjectRemoved, ObjectChanged, ObjectAdded} {
		if n[change] == 0 {
			continue
		}
		if len(parts) == 0 {
			parts = append(parts, fmt.Sprintf("%d %s %s", n[change], plural(n[change], "object", "objects"), change.word()))
		} else {
			parts = append(parts, fmt.Sprintf("%d %s", n[change], change.word()))
		}
	}
	if len(parts) == 0 {
		return "no object changes"
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func othersLine(others []Other) string {
	parts := make([]string, len(others))
	for i, o := range others {
		parts[i] = fmt.Sprintf("`%s` %s", o.Address, o.Action.phrase())
	}
	return strings.Join(parts, ", ")
}

// block is one part of the report that is kept or cut whole.
type block struct {
	text    string
	objects int
}

// resourceBlocks are a resource's heading, then one collapsed section per
// object.
func resourceBlocks(res Resource) []block {
	kind := "release"
	if res.Environment {
		kind = "environment"
	}
	blocks := []block{{text: fmt.Sprintf("#### %s `%s`\n\n", kind, res.Name)}}
	for _, obj := range res.Objects {
		blocks = append(blocks, block{text: objectSection(obj), objects: 1})
	}
	return blocks
}

// objectSection is one object: the summary names it and what changes; the
// collapsed body holds the changed lines, or the manifest of an added one.
func objectSection(obj Object) string {
	key := "<code>" + html.EscapeString(obj.Key) + "</code>"
	switch {
	case obj.Sensitive:
		return fmt.Sprintf("- %s %s: (sensitive value)\n\n", key, obj.Change.word())
	case obj.Unknown:
		return fmt.Sprintf("- %s %s: (known after apply)\n\n", key, obj.Change.word())
	case obj.Change == ObjectRemoved:
		return fmt.Sprintf("- %s removed\n\n", key)
	case obj.Change == ObjectAdded:
		return details(fmt.Sprintf("%s added", key), "yaml", obj.After)
	}
	lines, removed, added := changedLines(obj.Before, obj.After)
	return details(fmt.Sprintf("%s changed: %s", key, lineCounts(removed, added)), "diff", lines)
}

func lineCounts(removed, added int) string {
	switch {
	case removed == 0:
		return fmt.Sprintf("%d %s added", added, plural(added, "line", "lines"))
	case added == 0:
		return fmt.Sprintf("%d %s removed", removed, plural(removed, "line", "lines"))
	default:
		return fmt.Sprintf("%d %s removed, %d added", removed, plural(removed, "line", "lines"), added)
	}
}

// details is a collapsed section around a fenced code block; the fence is
// longer than any run of backticks in body, so no manifest can end it.
func details(summary, language, body string) string {
	fence := strings.Repeat("`", max(3, longestRun(body, '`')+1))
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return fmt.Sprintf("<details><summary>%s</summary>\n\n%s%s\n%s%s\n\n</details>\n\n", summary, fence, language, body, fence)
}

func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// fit keeps whole blocks while the report stays within opts.Limit, and says
// how much it cut and where the rest is.
func fit(blocks []block, opts Options, used int) string {
	var b strings.Builder
	// Room for the cut notice and the footer, which are short.
	reserve := 1024 + len(opts.FullReportURL) + len(opts.JobURL)
	for i, blk := range blocks {
		if opts.Limit > 0 && used+b.Len()+len(blk.text)+reserve > opts.Limit {
			return b.String() + cutNotice(blocks[i:], opts)
		}
		b.WriteString(blk.text)
	}
	return b.String()
}

func cutNotice(rest []block, opts Options) string {
	objects := 0
	for _, blk := range rest {
		objects += blk.objects
	}
	where := "the plan job's log"
	if opts.FullReportURL != "" {
		where = fmt.Sprintf("[the whole report](%s)", opts.FullReportURL)
	}
	return fmt.Sprintf("**The report is cut here, at GitLab's limit of a comment: %d more %s in %s.**\n", objects, plural(objects, "object is", "objects are"), where)
}

// Empty reports whether the plan changes nothing the report shows.
func (p Plan) Empty() bool {
	return len(changingResources(p)) == 0 && len(p.Others) == 0
}
