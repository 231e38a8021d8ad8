package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// compareRuns prints a markdown table of the medians of several runs side by side, one column
// per run, for recording a change's before and after:
//
//	go run ./scripts/bench/report -compare before=/tmp/a/results.tsv,after=/tmp/b/results.tsv
func compareRuns(w io.Writer, spec string) error {
	var labels []string
	var runs []*results
	for _, part := range strings.Split(spec, ",") {
		label, path, ok := strings.Cut(part, "=")
		if !ok || label == "" || path == "" {
			return fmt.Errorf("compare: want label=results.tsv, got %q", part)
		}
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("compare: open %s: %w", path, err)
		}
		res, err := parseResults(f)
		_ = f.Close()
		if err != nil {
			return fmt.Errorf("compare: %s: %w", path, err)
		}
		labels = append(labels, label)
		runs = append(runs, res)
	}
	writeComparison(w, labels, runs)
	return nil
}

var comparedRows = append(append([]metricRow(nil), terraformRows...),
	metricRow{"provider_failure", "`terraform apply` until the crash loop is reported"})

func writeComparison(w io.Writer, labels []string, runs []*results) {
	fmt.Fprintf(w, "| command | objects | %s |\n", strings.Join(labels, " | "))
	fmt.Fprintf(w, "|---|---:|%s\n", strings.Repeat("---:|", len(labels)))
	sizes := map[int]bool{}
	var ordered []int
	for _, res := range runs {
		for _, size := range res.sizes() {
			if !sizes[size] {
				sizes[size] = true
				ordered = append(ordered, size)
			}
		}
	}
	sort.Ints(ordered)
	for _, row := range comparedRows {
		for _, size := range ordered {
			cells := make([]string, len(runs))
			measured := false
			for i, res := range runs {
				st := res.stat(size, row.metric)
				if !st.hasSamples {
					cells[i] = "—"
					continue
				}
				measured = true
				cells[i] = fmt.Sprintf("%.2f s", st.median)
				if st.hasRSS {
					cells[i] += fmt.Sprintf(", %.0f MiB", st.rssPeak/1024)
				}
			}
			if measured {
				fmt.Fprintf(w, "| %s | %d | %s |\n", row.label, size, strings.Join(cells, " | "))
			}
		}
	}
}
