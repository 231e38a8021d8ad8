package main

import (
	"bytes"
	"fmt"
	"strconv"
)

// baselinePrefix marks the metrics scripts/bench.sh measures with the baseline's provider
// (BENCH_BASELINE); the same metric without it is this tree's, measured right after it.
const baselinePrefix = "baseline_"

// beforeAfterMetrics are the operations scripts/bench.sh measures with both providers.
var beforeAfterMetrics = []string{"plan_provider_only", "plan_nochange", "plan_change", "apply_install", "apply_upgrade", "destroy"}

// hasBaseline says whether the run measured a baseline's provider.
func (r *results) hasBaseline() bool {
	for _, size := range r.sizes() {
		for _, metric := range beforeAfterMetrics {
			if len(r.samples[size][baselinePrefix+metric]) > 0 {
				return true
			}
		}
	}
	return false
}

// beforeAfterPair is one operation at one size, measured with both providers.
type beforeAfterPair struct {
	metric        string
	size          int
	before, after stat
}

// beforeAfterPairs returns, metric by metric and smallest size first, the operations both
// providers have the figures of that measured asks for.
func (r *results) beforeAfterPairs(measured func(stat) bool) []beforeAfterPair {
	var out []beforeAfterPair
	for _, metric := range beforeAfterMetrics {
		for _, size := range r.tableSizes() {
			before, after := r.stat(size, baselinePrefix+metric), r.stat(size, metric)
			if measured(before) && measured(after) {
				out = append(out, beforeAfterPair{metric: metric, size: size, before: before, after: after})
			}
		}
	}
	return out
}

// terraformLabel returns the timing tables' label of metric.
func terraformLabel(metric string) string {
	for _, row := range terraformRows {
		if row.metric == metric {
			return row.label
		}
	}
	return metric
}

// ratio formats after/before, or a dash when there is nothing to divide by.
func ratio(before, after float64) string {
	if before <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2fx", after/before)
}

// writeBeforeAfter writes the baseline's figures beside this tree's: binary size, then times,
// then peak memory and CPU, each with the ratio after/before of the medians.
func writeBeforeAfter(w *bytes.Buffer, res *results, m meta) {
	if !res.hasBaseline() {
		return
	}
	before, after := m.get("baseline"), m.get("commit")
	fmt.Fprintf(w, "## Before and after: %s against %s\n\n", before, after)
	fmt.Fprintf(w, "Both providers in this one run: each run of each size measured the provider built from `scripts/bench/provider` at %s (%s) and, right after it, the one built at %s (%s), each with the shipped build's flags, on environments of their own and the same chart, so that load on the machine fell on both alike. Ratios are after/before of the medians; below 1 is faster or smaller after.\n\n",
		before, m.get("baseline_helm"), after, m.get("provider_helm"))

	fmt.Fprintln(w, "| binary | before | after | after/before |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	beforeBytes, errBefore := strconv.ParseFloat(m.get("baseline_bytes"), 64)
	afterBytes, errAfter := strconv.ParseFloat(m.get("provider_bytes"), 64)
	if errBefore == nil && errAfter == nil {
		fmt.Fprintf(w, "| size of the provider binary (static, `-trimpath -s -w`) | %.1f MB | %.1f MB | %s |\n\n", beforeBytes/1e6, afterBytes/1e6, ratio(beforeBytes, afterBytes))
	} else {
		fmt.Fprintln(w, "| size of the provider binary | not measured | not measured | — |")
		fmt.Fprintln(w)
	}

	fmt.Fprintln(w, "| command | objects | before (s) | after (s) | after/before |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, p := range res.beforeAfterPairs(func(st stat) bool { return st.hasSamples }) {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s |\n", terraformLabel(p.metric), p.size, formatStat(p.before), formatStat(p.after), ratio(p.before.median, p.after.median))
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "Peak resident memory of the provider (MiB, median [largest] of the largest peak among the processes of one command) and the CPU time those processes used together (seconds, median):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| command | objects | peak RSS before | peak RSS after | after/before | CPU before | CPU after | after/before |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, p := range res.beforeAfterPairs(func(st stat) bool { return st.hasRSS }) {
		b, a := p.before, p.after
		fmt.Fprintf(w, "| %s | %d | %.0f [%.0f] | %.0f [%.0f] | %s | %.2f | %.2f | %s |\n", terraformLabel(p.metric), p.size,
			b.rssMedian/1024, b.rssPeak/1024, a.rssMedian/1024, a.rssPeak/1024, ratio(b.rssMedian, a.rssMedian),
			b.cpuMedian, a.cpuMedian, ratio(b.cpuMedian, a.cpuMedian))
	}
	fmt.Fprintln(w)
}
