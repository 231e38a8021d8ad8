package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Sections are parts of BENCHMARKS.md that other modes of scripts/bench.sh write (BENCH_MODE=load,
// sweep), each between an opening and a closing marker. A full run rewrites the rest of the
// report and keeps them; a mode's run replaces its own section and keeps the rest.

var sectionPattern = regexp.MustCompile(`(?s)<!-- section:([a-z0-9-]+) -->\n.*?<!-- /section:([a-z0-9-]+) -->\n`)

func sectionMarkers(name string) (string, string) {
	return "<!-- section:" + name + " -->\n", "<!-- /section:" + name + " -->\n"
}

// sectionsOf returns the marked sections of report, markers included, in their order.
func sectionsOf(report string) []string {
	var out []string
	for _, m := range sectionPattern.FindAllStringSubmatch(report, -1) {
		if m[1] == m[2] {
			out = append(out, m[0])
		}
	}
	return out
}

// withSection returns report with the section name holding body: in place of the section of
// that name, or at the end when there is none.
func withSection(report, name, body string) string {
	open, closing := sectionMarkers(name)
	section := open + strings.TrimRight(body, "\n") + "\n" + closing
	if start := strings.Index(report, open); start >= 0 {
		if end := strings.Index(report[start:], closing); end >= 0 {
			return report[:start] + section + report[start+end+len(closing):]
		}
	}
	if report != "" && !strings.HasSuffix(report, "\n\n") {
		report = strings.TrimRight(report, "\n") + "\n\n"
	}
	return report + section
}

// writeSection replaces (or adds) the section name of the report at outPath with the content of
// bodyPath.
func writeSection(outPath, name, bodyPath string) error {
	body, err := os.ReadFile(bodyPath)
	if err != nil {
		return fmt.Errorf("read section: %w", err)
	}
	report, err := os.ReadFile(outPath)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("read report: %w", err)
	}
	if err := os.WriteFile(outPath, []byte(withSection(string(report), name, string(body))), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// keptSections returns the sections of the report at outPath, for a full run to keep.
func keptSections(outPath string) (string, error) {
	report, err := os.ReadFile(outPath)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read report: %w", err)
	}
	return strings.Join(sectionsOf(string(report)), "\n"), nil
}
