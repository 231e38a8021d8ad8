package main

import (
	"bytes"
	"fmt"
	"strings"
)

// The plan-speed targets of issue 25, as ratios to `helm template | kubectl diff --server-side`
// on the same release in the same run.
const (
	tunnelChangeSmallLimit  = 1.0 // one-change plan through the tunnel, at tunnelSmallSize objects
	tunnelChangeLargeLimit  = 0.5 // one-change plan through the tunnel, from tunnelLargeFrom objects
	tunnelNoChangeLimit     = 0.5 // no-change plan through the tunnel, every size
	loopbackOwnCostLimit    = 1.0 // the provider's own cost on loopback, at tunnelSmallSize objects
	loopbackChangeLimit     = 0.5 // one-change plan on loopback, from tunnelLargeFrom objects
	loopbackLargestSeconds  = 1.0 // one-change plan on loopback at loopbackLargestSize objects
	tunnelSmallSize         = 10
	tunnelLargeFrom         = 100
	loopbackLargestSize     = 1000
	tunnelPlanChange        = "tunnel_plan_change"
	tunnelPlanNoChange      = "tunnel_plan_nochange"
	tunnelPlanChangeWarm    = "tunnel_plan_change_warm"
	tunnelPlanHistory       = "tunnel_plan_nochange_history"
	tunnelHelmDiffChange    = "tunnel_helm_diff_change"
	tunnelHelmDiffNoChange  = "tunnel_helm_diff_nochange"
	loopbackPlanChange      = "plan_change"
	loopbackMinimalChange   = "plan_minimal_change"
	loopbackHelmDiffChange  = "helm_diff_change"
	tunnelTargetDescription = "`helm template \\| kubectl diff --server-side`"
)

// evaluateSpeedTargets checks issue 25's targets at every size measured.
func evaluateSpeedTargets(res *results) []targetResult {
	var out []targetResult
	for _, size := range res.tableSizes() {
		if res.stat(size, tunnelPlanChange).hasSamples || res.stat(size, tunnelHelmDiffChange).hasSamples {
			limit := tunnelChangeSmallLimit
			if size >= tunnelLargeFrom {
				limit = tunnelChangeLargeLimit
			}
			out = append(out, ratioTarget(res, size, tunnelPlanChange, tunnelHelmDiffChange, limit,
				fmt.Sprintf("Through the tunnel, one-change plan at most %.1fx %s, %d objects", limit, tunnelTargetDescription, size)))
			out = append(out, ratioTarget(res, size, tunnelPlanNoChange, tunnelHelmDiffNoChange, tunnelNoChangeLimit,
				fmt.Sprintf("Through the tunnel, no-change plan at most %.1fx %s with no change, %d objects", tunnelNoChangeLimit, tunnelTargetDescription, size)))
		}
	}
	if res.stat(tunnelSmallSize, loopbackPlanChange).hasSamples {
		out = append(out, ownCostTarget(res))
	}
	for _, size := range res.tableSizes() {
		if size < tunnelLargeFrom || !res.stat(size, loopbackPlanChange).hasSamples {
			continue
		}
		out = append(out, ratioTarget(res, size, loopbackPlanChange, loopbackHelmDiffChange, loopbackChangeLimit,
			fmt.Sprintf("On loopback, one-change plan at most %.1fx %s, %d objects", loopbackChangeLimit, tunnelTargetDescription, size)))
	}
	if largest := res.stat(loopbackLargestSize, loopbackPlanChange); largest.hasSamples {
		out = append(out, targetResult{
			target:   fmt.Sprintf("On loopback, one-change plan of %d objects within %.1f s", loopbackLargestSize, loopbackLargestSeconds),
			measured: fmt.Sprintf("%.2f s", largest.median),
			verdict:  passIf(largest.median <= loopbackLargestSeconds),
		})
	}
	return out
}

// ratioTarget compares the medians of metric and reference at size: at most limit times.
func ratioTarget(res *results, size int, metric, reference string, limit float64, target string) targetResult {
	st, ref := res.stat(size, metric), res.stat(size, reference)
	row := targetResult{target: target, verdict: verdictNotMeasured}
	if st.hasSamples && ref.hasSamples && ref.median > 0 {
		ratio := st.median / ref.median
		row.measured = fmt.Sprintf("%.2fx (%.2f s vs %.2f s)", ratio, st.median, ref.median)
		if st.hasCounts && ref.hasCounts {
			row.measured += fmt.Sprintf("; %.0f vs %.0f requests, %s vs %s received", st.requestsMedian, ref.requestsMedian, formatBytes(st.bytesMedian), formatBytes(ref.bytesMedian))
		}
		row.verdict = passIf(ratio <= limit)
	}
	return row
}

// ownCostTarget: the one-change plan less the plan of a provider that does nothing, against the
// pair, on loopback at the small size.
func ownCostTarget(res *results) targetResult {
	plan, minimal, diff := res.stat(tunnelSmallSize, loopbackPlanChange), res.stat(tunnelSmallSize, loopbackMinimalChange), res.stat(tunnelSmallSize, loopbackHelmDiffChange)
	row := targetResult{
		target:  fmt.Sprintf("On loopback, the provider's own cost (one-change plan less a provider that does nothing) at most %.1fx %s, %d objects", loopbackOwnCostLimit, tunnelTargetDescription, tunnelSmallSize),
		verdict: verdictNotMeasured,
	}
	if plan.hasSamples && minimal.hasSamples && diff.hasSamples && diff.median > 0 {
		own := plan.median - minimal.median
		row.measured = fmt.Sprintf("%.2fx (%.2f s − %.2f s = %.2f s vs %.2f s)", own/diff.median, plan.median, minimal.median, own, diff.median)
		row.verdict = passIf(own/diff.median <= loopbackOwnCostLimit)
	}
	return row
}

var tunnelRows = []metricRow{
	{tunnelPlanNoChange, "`terraform plan`, no change"},
	{tunnelPlanChange, "`terraform plan`, one changed value"},
	{tunnelPlanChangeWarm, "`terraform plan`, one changed value, with the cache folder the plan before it filled (`GITLABK8S_CACHE_DIR` kept in a CI job's cache)"},
	{tunnelPlanHistory, "`terraform plan`, no change, of a release with a long history (`BENCH_HISTORY` upgrades, ten by default: the revisions Helm keeps)"},
	{tunnelHelmDiffNoChange, "`helm template \\| kubectl diff --server-side`, no change"},
	{tunnelHelmDiffChange, "`helm template \\| kubectl diff --server-side`, one change"},
}

// writeTunnelTable writes the plans through the tunnel: time, requests and bytes received.
func writeTunnelTable(w *bytes.Buffer, res *results, m meta, sizes []int) {
	if m.get("tunnel") != "1" {
		return
	}
	fmt.Fprintf(w, "## Through a tunnel (%s round trip, %s each way)\n\n", m.get("tunnel_latency"), m.get("tunnel_rate"))
	fmt.Fprintln(w, "Every request of the command goes through `scripts/bench/tunnel`, as a CI job's go through the GitLab agent's server: TLS ends at the tunnel, which passes each request on and adds the delay and the bandwidth limit on the clients' link (toxiproxy's latency and bandwidth toxics). Each cell: seconds, median [fastest–slowest] · requests made · bytes the command received (TLS included), medians.")
	fmt.Fprintln(w)
	writeHeader(w, "command", sizes)
	for _, row := range tunnelRows {
		cells := make([]string, 0, len(sizes))
		for _, size := range sizes {
			st := res.stat(size, row.metric)
			switch {
			case !st.hasSamples:
				cells = append(cells, "—")
			case !st.hasCounts:
				cells = append(cells, formatStat(st))
			default:
				cells = append(cells, fmt.Sprintf("%s · %.0f · %s", formatStat(st), st.requestsMedian, formatBytes(st.bytesMedian)))
			}
		}
		fmt.Fprintf(w, "| %s | %s |\n", row.label, strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
}

// formatBytes prints a byte count in kB or MB (powers of ten).
func formatBytes(b float64) string {
	if b >= 1e6 {
		return fmt.Sprintf("%.2f MB", b/1e6)
	}
	return fmt.Sprintf("%.0f kB", b/1e3)
}
