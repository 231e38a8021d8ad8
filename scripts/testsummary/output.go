package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"
)

// stream copies a run to w as plain `go test` would print it: build errors, the whole output
// of each failed test, and each package's result line. With topLevel it also prints one
// "--- PASS: TestX (1.2s)" line per finished top-level test, so a long run shows progress.
func stream(in io.Reader, w io.Writer, topLevel bool) error {
	r := newRun()
	return eachEvent(in, func(e event, raw string) {
		if raw != "" {
			_, _ = io.WriteString(w, raw)
			return
		}
		if e.Action == "build-output" {
			_, _ = io.WriteString(w, e.Output)
		}
		test, pkg := r.add(e)
		switch {
		case test != nil && test.action == "fail":
			for _, o := range test.output {
				_, _ = io.WriteString(w, o)
			}
		case test != nil && topLevel && !strings.Contains(test.name, "/"):
			fmt.Fprintf(w, "--- %s: %s (%.1fs)\n", strings.ToUpper(test.action), test.name, e.Elapsed)
		case pkg != nil:
			for _, o := range pkg.output {
				if line := strings.TrimSpace(o); line != "PASS" && line != "FAIL" {
					_, _ = io.WriteString(w, o)
				}
			}
		}
	})
}

// writeSummary writes one run's packages, tools and skips.
func writeSummary(w io.Writer, label string, r *run, expected *regexp.Regexp) {
	var passed, failed, skipped int
	for _, name := range r.pkgOrder {
		p := r.packages[name]
		passed, failed, skipped = passed+p.passed, failed+p.failed, skipped+p.skipped
	}
	fmt.Fprintf(w, "\n== %s: %d tests passed, %d failed, %d skipped\n", label, passed, failed, skipped)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, name := range r.pkgOrder {
		p := r.packages[name]
		if p.passed+p.failed+p.skipped == 0 && p.action != "fail" {
			continue
		}
		result := p.action
		if result == "" {
			result = "unfinished"
		}
		tools := strings.Join(p.toolchainList(), " ")
		if tools == "" {
			tools = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d passed\t%d failed\t%d skipped\ttools: %s\n", shortPackage(name), result, p.passed, p.failed, p.skipped, tools)
	}
	_ = tw.Flush()

	expectedCount := 0
	var listed []*testResult
	for _, t := range r.skips() {
		if expected != nil && label == "unit" && expected.MatchString(skipReason(t.output)) {
			expectedCount++
			continue
		}
		listed = append(listed, t)
	}
	if expectedCount > 0 {
		fmt.Fprintf(w, "  %d tests skipped as expected here (reason matches %q); they run in the acceptance run\n", expectedCount, expected.String())
	}
	if len(listed) == 0 {
		return
	}
	fmt.Fprintf(w, "  skipped (%d):\n", len(listed))
	for _, t := range listed {
		fmt.Fprintf(w, "    %s %s: %s\n", shortPackage(t.pkg), t.name, skipReason(t.output))
	}
}

// shortPackage drops the module path: internal/provider rather than github.com/.../internal/provider.
func shortPackage(name string) string {
	if i := strings.Index(name, "/internal/"); i >= 0 {
		return name[i+1:]
	}
	if i := strings.Index(name, "/scripts/"); i >= 0 {
		return name[i+1:]
	}
	return name
}
