package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// testdata/run.json is `go test -json` of two packages: tsx/a with a passing test that logs a
// toolchain line, a failing subtest, skipped tests and subtests, and tsx/b, which does not build.

// streamFixture returns what stream prints for testdata/run.json.
func streamFixture(t *testing.T, topLevel bool) string {
	t.Helper()
	f, err := os.Open("testdata/run.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	if err := stream(f, &out, topLevel); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestStream_printsFailuresAndPackageResultsOnly(t *testing.T) {
	got := streamFixture(t, false)
	for _, want := range []string{"undefined: undefined", "FAIL\ttsx/b [build failed]", "a_test.go:4: boom", "--- FAIL: TestFail/sub", "FAIL\ttsx/a"} {
		if !strings.Contains(got, want) {
			t.Errorf("stream output lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"toolchain:", "TestPass", "--- SKIP", "no tofu"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("stream output shows %q, which plain go test does not:\n%s", unwanted, got)
		}
	}
}

func TestStream_topLevelTests(t *testing.T) {
	got := streamFixture(t, true)
	for _, want := range []string{"--- PASS: TestPass (", "--- SKIP: TestSkip (", "--- FAIL: TestFail ("} {
		if !strings.Contains(got, want) {
			t.Errorf("stream -tests output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "--- SKIP: TestSkipSub/terraform (") {
		t.Errorf("stream -tests prints subtests:\n%s", got)
	}
}

func TestReport_listsEverySkipWithItsReasonAndTheTools(t *testing.T) {
	var out strings.Builder
	if err := report(&out, []string{"acceptance=testdata/run.json"}, regexp.MustCompile("set TF_ACC=1")); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"== acceptance: 2 tests passed, 2 failed, 3 skipped",
		"tools: terraform=/usr/bin/terraform",
		"skipped (3):",
		"tsx/a TestSkip: no tofu: build it",
		"tsx/a TestSkipSub/terraform: no terraform on PATH: x",
		"tsx/a TestAcc: acceptance test: set TF_ACC=1 to run it",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}

func TestReport_countsExpectedSkipsOfTheUnitRun(t *testing.T) {
	var out strings.Builder
	if err := report(&out, []string{"unit=testdata/run.json", "acceptance=testdata/missing.json"}, regexp.MustCompile("set TF_ACC=1")); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "1 tests skipped as expected here") || strings.Contains(got, "TestAcc:") {
		t.Errorf("the unit run's acceptance skips are not counted apart:\n%s", got)
	}
	if !strings.Contains(got, "TestSkip: no tofu: build it") {
		t.Errorf("an unexpected skip of the unit run is not listed:\n%s", got)
	}
	if !strings.Contains(got, "acceptance: did not run") {
		t.Errorf("a run that left no file is not reported:\n%s", got)
	}
}
