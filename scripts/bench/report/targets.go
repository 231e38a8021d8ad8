package main

import "fmt"

// verdict says how a measured figure compares with its target.
type verdict string

const (
	verdictPass        verdict = "PASS"
	verdictMiss        verdict = "MISS"
	verdictNotMeasured verdict = "not measured"
)

// targetResult is one row of the targets table.
type targetResult struct {
	target   string
	measured string
	verdict  verdict
}

// The figures issue 7 sets, as ratios of figures from the same run.
const (
	floorRatioLimit      = 1.5 // no-change plan of 100 objects vs the empty-configuration plan
	floorRatioSize       = 100
	growthFrom, growthTo = 100, 1000
	failureLimitSeconds  = 20.0
	destroyMarginSeconds = 2.0
	failureDetectionSize = 10 // the failure runs use a 10-object chart
)

// evaluateTargets checks every target against the medians in res.
func evaluateTargets(res *results) []targetResult {
	var out []targetResult

	plan, floor := res.stat(floorRatioSize, "plan_nochange"), res.stat(floorRatioSize, "plan_empty")
	row := targetResult{target: fmt.Sprintf("No-change plan of a %d-object release within %.1fx the empty-configuration plan", floorRatioSize, floorRatioLimit)}
	if plan.hasSamples && floor.hasSamples && floor.median > 0 {
		ratio := plan.median / floor.median
		row.measured = fmt.Sprintf("%.2fx (%.2f s vs %.2f s)", ratio, plan.median, floor.median)
		if minimal := res.stat(floorRatioSize, "plan_minimal_nochange"); minimal.hasSamples {
			row.measured += fmt.Sprintf("; a provider that does nothing: %.2fx (%.2f s)", minimal.median/floor.median, minimal.median)
		}
		row.verdict = passIf(ratio <= floorRatioLimit)
	} else {
		row.verdict = verdictNotMeasured
	}
	out = append(out, row)

	for _, metric := range []struct{ name, label string }{
		{"plan_nochange", "no-change plan"},
		{"plan_change", "one-change plan"},
	} {
		from, to := res.stat(growthFrom, metric.name), res.stat(growthTo, metric.name)
		limit := float64(growthTo) / float64(growthFrom)
		row := targetResult{target: fmt.Sprintf("Time of a %s grows no worse than linearly from %d to %d objects (at most %.0fx)", metric.label, growthFrom, growthTo, limit)}
		if from.hasSamples && to.hasSamples && from.median > 0 {
			ratio := to.median / from.median
			row.measured = fmt.Sprintf("%.2fx (%.2f s to %.2f s)", ratio, from.median, to.median)
			row.verdict = passIf(ratio <= limit)
		} else {
			row.verdict = verdictNotMeasured
		}
		out = append(out, row)
	}

	for _, size := range res.tableSizes() {
		plan, diff := res.stat(size, "plan_change"), res.stat(size, "helm_diff_change")
		if !plan.hasSamples && !diff.hasSamples {
			continue
		}
		row := targetResult{target: fmt.Sprintf("One-change plan faster than `helm template \\| kubectl diff --server-side`, %d objects", size)}
		if plan.hasSamples && diff.hasSamples {
			row.measured = fmt.Sprintf("%.2f s vs %.2f s (%.2fx)", plan.median, diff.median, plan.median/diff.median)
			if minimal := res.stat(size, "plan_minimal_change"); minimal.hasSamples {
				row.measured += fmt.Sprintf("; a provider that does nothing: %.2f s", minimal.median)
			}
			row.verdict = passIf(plan.median < diff.median)
		} else {
			row.verdict = verdictNotMeasured
		}
		out = append(out, row)
	}

	failure := res.stat(failureDetectionSize, "provider_failure")
	row = targetResult{target: fmt.Sprintf("Crash-looping Deployment reported within %.0f s of apply start, every run", failureLimitSeconds)}
	if failure.hasSamples {
		row.measured = fmt.Sprintf("slowest %.2f s, median %.2f s (%d runs)", failure.max, failure.median, failure.n)
		row.verdict = passIf(failure.max <= failureLimitSeconds)
	} else {
		row.verdict = verdictNotMeasured
	}
	out = append(out, row)

	for _, size := range res.tableSizes() {
		destroy, nsDelete := res.stat(size, "destroy"), res.stat(size, "namespace_delete")
		if !destroy.hasSamples && !nsDelete.hasSamples {
			continue
		}
		row := targetResult{target: fmt.Sprintf("Environment destroy within %.0f s of the namespace controller's own time, %d objects", destroyMarginSeconds, size)}
		if destroy.hasSamples && nsDelete.hasSamples {
			margin := destroy.median - nsDelete.median
			row.measured = fmt.Sprintf("%+.2f s (%.2f s vs %.2f s)", margin, destroy.median, nsDelete.median)
			row.verdict = passIf(margin <= destroyMarginSeconds)
		} else {
			row.verdict = verdictNotMeasured
		}
		out = append(out, row)
	}
	return out
}

func passIf(ok bool) verdict {
	if ok {
		return verdictPass
	}
	return verdictMiss
}
