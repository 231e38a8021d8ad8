package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		want   float64
	}{
		{"one", []float64{3}, 3},
		{"odd count, unsorted", []float64{5, 1, 3}, 3},
		{"even count takes the mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := median(tt.values); got != tt.want {
				t.Errorf("median(%v) = %v, want %v", tt.values, got, tt.want)
			}
		})
	}
}

func TestParseResults_rejectsMalformedLines(t *testing.T) {
	for _, input := range []string{
		"100\tplan_nochange\t1\t0.5\t0\t0\n",       // six fields
		"ten\tplan_nochange\t1\t0.5\t0\t0\t0\n",    // size not a number
		"100\tplan_nochange\t1\tfast\t0\t0\t0\n",   // seconds not a number
		"100\tplan_nochange\t1\t0.5\t0\t0\tmany\n", // processes not a number
	} {
		if _, err := parseResults(strings.NewReader(input)); err == nil {
			t.Errorf("parseResults(%q) succeeded, want an error", input)
		}
	}
}

// lines builds results input: size, metric, then one seconds value per run (no provider process).
func lines(size, metric string, seconds ...string) string {
	var b strings.Builder
	for i, s := range seconds {
		b.WriteString(size + "\t" + metric + "\t" + string(rune('1'+i)) + "\t" + s + "\t0\t0\t0\n")
	}
	return b.String()
}

// expectLines fails the test for each of wants that out does not contain.
func expectLines(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func verdicts(t *testing.T, input string) map[string]targetResult {
	t.Helper()
	res, err := parseResults(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]targetResult{}
	for _, r := range evaluateTargets(res) {
		out[r.target] = r
	}
	return out
}

func findTarget(t *testing.T, all map[string]targetResult, prefix string) targetResult {
	t.Helper()
	for name, r := range all {
		if strings.HasPrefix(name, prefix) {
			return r
		}
	}
	t.Fatalf("no target starting %q among %v", prefix, all)
	return targetResult{}
}

func TestEvaluateTargets_floorRatio(t *testing.T) {
	tests := []struct {
		name    string
		plan    []string
		want    verdict
		measure string
	}{
		// Medians: floor 1.0 s; plan 1.5 s is exactly the limit.
		{"at the limit passes", []string{"1.4", "1.5", "9.0"}, verdictPass, "1.50x"},
		{"over the limit misses", []string{"1.6", "1.6", "1.0"}, verdictMiss, "1.60x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := lines("100", "plan_empty", "1.0", "0.9", "1.1") + lines("100", "plan_nochange", tt.plan...)
			got := findTarget(t, verdicts(t, input), "No-change plan of a 100-object release")
			if got.verdict != tt.want || !strings.HasPrefix(got.measured, tt.measure) {
				t.Errorf("got %s %q, want %s %q...", got.verdict, got.measured, tt.want, tt.measure)
			}
		})
	}
}

func TestEvaluateTargets_notMeasuredWithoutBothFigures(t *testing.T) {
	all := verdicts(t, lines("100", "plan_nochange", "1.0"))
	for _, prefix := range []string{"No-change plan of a 100-object release", "Time of a no-change plan grows", "Crash-looping Deployment"} {
		if got := findTarget(t, all, prefix); got.verdict != verdictNotMeasured {
			t.Errorf("%s: got %s, want %s", prefix, got.verdict, verdictNotMeasured)
		}
	}
}

func TestEvaluateTargets_growth(t *testing.T) {
	input := lines("100", "plan_nochange", "1.0") + lines("1000", "plan_nochange", "10.5") +
		lines("100", "plan_change", "2.0") + lines("1000", "plan_change", "4.0")
	all := verdicts(t, input)
	if got := findTarget(t, all, "Time of a no-change plan grows"); got.verdict != verdictMiss {
		t.Errorf("no-change growth 10.5x: got %s, want MISS", got.verdict)
	}
	if got := findTarget(t, all, "Time of a one-change plan grows"); got.verdict != verdictPass {
		t.Errorf("one-change growth 2x: got %s, want PASS", got.verdict)
	}
}

func TestEvaluateTargets_perSizeComparisons(t *testing.T) {
	input := lines("10", "plan_change", "0.8") + lines("10", "helm_diff_change", "1.0") +
		lines("1000", "plan_change", "3.0") + lines("1000", "helm_diff_change", "2.0") +
		lines("10", "destroy", "4.0") + lines("10", "namespace_delete", "2.0") +
		lines("1000", "destroy", "9.0") + lines("1000", "namespace_delete", "6.5")
	all := verdicts(t, input)
	for prefix, want := range map[string]verdict{
		"One-change plan faster than `helm template \\| kubectl diff --server-side`, 10 objects":   verdictPass,
		"One-change plan faster than `helm template \\| kubectl diff --server-side`, 1000 objects": verdictMiss,
		"Environment destroy within 2 s of the namespace controller's own time, 10 objects":        verdictPass,
		"Environment destroy within 2 s of the namespace controller's own time, 1000 objects":      verdictMiss,
	} {
		if got := findTarget(t, all, prefix); got.verdict != want {
			t.Errorf("%s: got %s (%s), want %s", prefix, got.verdict, got.measured, want)
		}
	}
}

func TestEvaluateTargets_failureUsesTheSlowestRun(t *testing.T) {
	all := verdicts(t, lines("10", "provider_failure", "5", "6", "21"))
	if got := findTarget(t, all, "Crash-looping Deployment"); got.verdict != verdictMiss {
		t.Errorf("slowest run 21 s: got %s, want MISS", got.verdict)
	}
}

func TestWriteReport_failureRunsDoNotAddASizeColumn(t *testing.T) {
	res, err := parseResults(strings.NewReader(lines("100", "plan_nochange", "1.0") + lines("10", "provider_failure", "5")))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	writeReport(&buf, res, meta{values: map[string]string{}}, nil, []byte("## Findings\n\nnote"))
	out := buf.String()
	if strings.Contains(out, "| 10 objects") {
		t.Errorf("report has a 10-object column though only failure detection ran at 10:\n%s", out)
	}
	expectLines(t, out, "| 100 objects |", "| `terraform apply` | 1 | 5.00 |", "## Findings")
}

func TestStat_providerFiguresOnlyFromCommandsThatStartedIt(t *testing.T) {
	input := "100\tplan_nochange\t1\t1.0\t102400\t0.6\t3\n" +
		"100\tplan_nochange\t2\t1.2\t204800\t0.8\t3\n" +
		"100\tplan_nochange\t3\t1.1\t153600\t1.0\t3\n" +
		"100\tplan_empty\t1\t0.1\t0\t0\t0\n"
	res, err := parseResults(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	st := res.stat(100, "plan_nochange")
	if !st.hasRSS || st.rssMedian != 153600 || st.rssPeak != 204800 || st.cpuMedian != 0.8 || st.processesMedian != 3 {
		t.Errorf("plan_nochange stat = %+v, want RSS median 153600, peak 204800, CPU 0.8, 3 processes", st)
	}
	if st := res.stat(100, "plan_empty"); st.hasRSS {
		t.Errorf("plan_empty started no provider but has provider figures: %+v", st)
	}
}

func TestWriteComparison_oneColumnPerRun(t *testing.T) {
	before, err := parseResults(strings.NewReader("1000\tplan_nochange\t1\t20.0\t122880\t1.8\t3\n1000\tplan_nochange\t2\t19.0\t102400\t1.7\t3\n"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := parseResults(strings.NewReader(lines("1000", "plan_nochange", "2.5")))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	writeComparison(&buf, []string{"before", "after"}, []*results{before, after})
	want := "| `terraform plan`, no change | 1000 | 19.50 s, 120 MiB | 2.50 s |"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("comparison lacks %q:\n%s", want, buf.String())
	}
	if strings.Contains(buf.String(), "one changed value") {
		t.Errorf("comparison has a row no run measured:\n%s", buf.String())
	}
}

func TestWriteComparison_headerMatchesColumns(t *testing.T) {
	res, err := parseResults(strings.NewReader(lines("100", "plan_nochange", "1.0")))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	writeComparison(&buf, []string{"before", "after"}, []*results{res, res})
	rows := strings.Split(strings.TrimSpace(buf.String()), "\n")
	for _, row := range rows {
		if got, want := strings.Count(row, "|"), 5; got != want {
			t.Errorf("row %q has %d cell borders, want %d", row, got, want)
		}
	}
}

// The plan of a provider that does nothing is quoted beside the targets it bounds, and leaves
// their verdicts to the measured figures alone.
func TestEvaluateTargets_quoteTheProviderThatDoesNothing(t *testing.T) {
	input := lines("100", "plan_empty", "0.03") + lines("100", "plan_nochange", "0.30") +
		lines("100", "plan_minimal_nochange", "0.15") +
		lines("10", "plan_change", "0.28") + lines("10", "helm_diff_change", "0.11") +
		lines("10", "plan_minimal_change", "0.15")
	all := verdicts(t, input)
	floor := findTarget(t, all, "No-change plan of a 100-object release")
	if floor.verdict != verdictMiss || !strings.Contains(floor.measured, "a provider that does nothing: 5.00x (0.15 s)") {
		t.Errorf("floor target: got %s %q", floor.verdict, floor.measured)
	}
	diff := findTarget(t, all, "One-change plan faster than `helm template \\| kubectl diff --server-side`, 10 objects")
	if diff.verdict != verdictMiss || !strings.Contains(diff.measured, "a provider that does nothing: 0.15 s") {
		t.Errorf("diff target: got %s %q", diff.verdict, diff.measured)
	}
}

func TestWriteBeforeAfter_ratiosOfTheMedians(t *testing.T) {
	input := "100\tbaseline_plan_nochange\t1\t2.0\t102400\t0.4\t3\n" +
		"100\tbaseline_plan_nochange\t2\t4.0\t122880\t0.6\t3\n" +
		"100\tbaseline_plan_nochange\t3\t3.0\t112640\t0.5\t3\n" +
		"100\tplan_nochange\t1\t1.5\t153600\t0.5\t3\n" +
		"100\tplan_nochange\t2\t1.5\t153600\t0.5\t3\n" +
		"100\tplan_nochange\t3\t1.5\t163840\t0.5\t3\n" +
		"100\tapply_install\t1\t9.0\t204800\t2.0\t4\n" // no baseline figure: no row
	res, err := parseResults(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	m := meta{values: map[string]string{"baseline": "94a27b2", "commit": "1ee1ab4", "baseline_bytes": "60000000", "provider_bytes": "75000000"}}
	var buf bytes.Buffer
	writeBeforeAfter(&buf, res, m)
	out := buf.String()
	expectLines(t, out,
		"## Before and after: 94a27b2 against 1ee1ab4",
		"| size of the provider binary (static, `-trimpath -s -w`) | 60.0 MB | 75.0 MB | 1.25x |",
		"| `terraform plan`, no change | 100 | 3.00 [2.00–4.00] | 1.50 [1.50–1.50] | 0.50x |",
		"| `terraform plan`, no change | 100 | 110 [120] | 150 [160] | 1.36x | 0.50 | 0.50 | 1.00x |")
	if strings.Contains(out, "install") {
		t.Errorf("before-and-after has a row the baseline did not measure:\n%s", out)
	}
}

func TestWriteReport_beforeAndAfterOnlyWithABaseline(t *testing.T) {
	for _, tt := range []struct {
		name  string
		input string
		want  bool
	}{
		{"without", lines("100", "plan_nochange", "1.0"), false},
		{"with", lines("100", "plan_nochange", "1.0") + lines("100", "baseline_plan_nochange", "2.0"), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := parseResults(strings.NewReader(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			writeReport(&buf, res, meta{values: map[string]string{}}, nil, nil)
			if got := strings.Contains(buf.String(), "## Before and after"); got != tt.want {
				t.Errorf("report has a before-and-after section: %v, want %v:\n%s", got, tt.want, buf.String())
			}
		})
	}
}

// counted builds results input of commands measured through the tunnel: seconds, requests and
// bytes per run.
func counted(size, metric string, runs ...[3]string) string {
	var b strings.Builder
	for i, r := range runs {
		b.WriteString(size + "\t" + metric + "\t" + string(rune('1'+i)) + "\t" + r[0] + "\t0\t0\t0\t" + r[1] + "\t" + r[2] + "\n")
	}
	return b.String()
}

func TestEvaluateSpeedTargets_tunnelAndLoopback(t *testing.T) {
	input := counted("10", "tunnel_plan_change", [3]string{"0.9", "20", "30000"}) +
		counted("10", "tunnel_helm_diff_change", [3]string{"1.0", "30", "900000"}) +
		counted("10", "tunnel_plan_nochange", [3]string{"0.6", "15", "20000"}) +
		counted("10", "tunnel_helm_diff_nochange", [3]string{"1.0", "30", "900000"}) +
		counted("100", "tunnel_plan_change", [3]string{"0.6", "40", "90000"}) +
		counted("100", "tunnel_helm_diff_change", [3]string{"1.0", "60", "1000000"}) +
		lines("10", "plan_change", "0.30") + lines("10", "plan_minimal_change", "0.15") + lines("10", "helm_diff_change", "0.10") +
		lines("100", "plan_change", "0.40") + lines("100", "helm_diff_change", "1.00") +
		lines("1000", "plan_change", "1.20") + lines("1000", "helm_diff_change", "3.00")
	res, err := parseResults(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]targetResult{}
	for _, r := range evaluateSpeedTargets(res) {
		all[r.target] = r
	}
	for prefix, want := range map[string]verdict{
		"Through the tunnel, one-change plan at most 1.0x `helm template \\| kubectl diff --server-side`, 10 objects":                verdictPass,
		"Through the tunnel, no-change plan at most 0.5x `helm template \\| kubectl diff --server-side` with no change, 10 objects":  verdictMiss,
		"Through the tunnel, one-change plan at most 0.5x `helm template \\| kubectl diff --server-side`, 100 objects":               verdictMiss,
		"Through the tunnel, no-change plan at most 0.5x `helm template \\| kubectl diff --server-side` with no change, 100 objects": verdictNotMeasured,
		"On loopback, the provider's own cost (one-change plan less a provider that does nothing) at most 1.0x":                      verdictMiss,
		"On loopback, one-change plan at most 0.5x `helm template \\| kubectl diff --server-side`, 100 objects":                      verdictPass,
		"On loopback, one-change plan at most 0.5x `helm template \\| kubectl diff --server-side`, 1000 objects":                     verdictPass,
		"On loopback, one-change plan of 1000 objects within 1.0 s":                                                                  verdictMiss,
	} {
		if got := findTarget(t, all, prefix); got.verdict != want {
			t.Errorf("%s: got %s (%s), want %s", prefix, got.verdict, got.measured, want)
		}
	}
	if got := findTarget(t, all, "Through the tunnel, one-change plan at most 1.0x").measured; !strings.Contains(got, "20 vs 30 requests, 30 kB vs 900 kB received") {
		t.Errorf("the tunnel's target does not quote the requests and bytes: %s", got)
	}
}

func TestParseResults_countsOnlyWhenCounted(t *testing.T) {
	res, err := parseResults(strings.NewReader("10\tplan_change\t1\t0.5\t0\t0\t0\t-\t-\n" + counted("10", "tunnel_plan_change", [3]string{"0.9", "12", "3400"})))
	if err != nil {
		t.Fatal(err)
	}
	if st := res.stat(10, "plan_change"); st.hasCounts {
		t.Errorf("a command measured on loopback has counts: %+v", st)
	}
	if st := res.stat(10, "tunnel_plan_change"); !st.hasCounts || st.requestsMedian != 12 || st.bytesMedian != 3400 {
		t.Errorf("tunnel counts = %+v, want 12 requests and 3400 bytes", st)
	}
	if _, err := parseResults(strings.NewReader("10\tplan_change\t1\t0.5\t0\t0\t0\tmany\t-\n")); err == nil {
		t.Error("requests that are not a number were accepted")
	}
}

// The tunnel table has a row for the plan whose cache folder an earlier plan filled, with its
// requests and bytes, so the cache's saving reads off the table.
func TestWriteTunnelTable_warmCacheRow(t *testing.T) {
	res, err := parseResults(strings.NewReader(counted("10", "tunnel_plan_change", [3]string{"3.9", "23", "2550000"}) +
		counted("10", "tunnel_plan_change_warm", [3]string{"2.8", "19", "100000"})))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	writeTunnelTable(&buf, res, meta{values: map[string]string{"tunnel": "1"}}, []int{10})
	if got := buf.String(); !strings.Contains(got, "with the cache folder the plan before it filled (`GITLABK8S_CACHE_DIR` kept in a CI job's cache) | 2.80 · 19 · 100 kB |") {
		t.Errorf("the tunnel table has no warm-cache row with its figures:\n%s", got)
	}
}

// The tunnel table has a row for the no-change plan of a release with a long history, with its
// requests and bytes, and a dash at a size it was not measured at.
func TestWriteTunnelTable_longHistoryRow(t *testing.T) {
	res, err := parseResults(strings.NewReader(counted("10", "tunnel_plan_nochange", [3]string{"0.7", "16", "84000"}) +
		counted("10", "tunnel_plan_nochange_history", [3]string{"0.8", "16", "99000"}) +
		counted("1000", "tunnel_plan_nochange", [3]string{"2.1", "18", "1900000"})))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	writeTunnelTable(&buf, res, meta{values: map[string]string{"tunnel": "1"}}, []int{10, 1000})
	if got := buf.String(); !strings.Contains(got, "the revisions Helm keeps) | 0.80 · 16 · 99 kB | — |") {
		t.Errorf("the tunnel table has no long-history row with its figures:\n%s", got)
	}
}
