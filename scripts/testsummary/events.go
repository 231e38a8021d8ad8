package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
	Elapsed    float64
}

// testResult is what a run recorded of one test.
type testResult struct {
	pkg, name string
	action    string // pass, fail or skip; empty while it runs
	output    []string
}

// pkgResult is what a run recorded of one package.
type pkgResult struct {
	name                string
	action              string
	elapsed             float64
	passed, failed      int
	skipped             int
	toolchain           map[string]bool
	output, buildOutput []string
}

// run is one `go test -json` run, in the order its packages and tests appeared.
type run struct {
	packages map[string]*pkgResult
	pkgOrder []string
	tests    map[string]*testResult
	order    []string
}

func newRun() *run {
	return &run{packages: map[string]*pkgResult{}, tests: map[string]*testResult{}}
}

// toolchainLine is what a test logs to name a tool it ran: "toolchain: terraform=/usr/bin/terraform".
var toolchainLine = regexp.MustCompile(`toolchain: ([A-Za-z0-9_.-]+=\S+)`)

func (r *run) pkg(name string) *pkgResult {
	p, ok := r.packages[name]
	if !ok {
		p = &pkgResult{name: name, toolchain: map[string]bool{}}
		r.packages[name] = p
		r.pkgOrder = append(r.pkgOrder, name)
	}
	return p
}

// add records one event and returns the test or package it finished, if any.
func (r *run) add(e event) (finishedTest *testResult, finishedPkg *pkgResult) {
	if e.Action == "build-output" || e.Action == "build-fail" {
		p := r.pkg(e.ImportPath)
		if e.Output != "" {
			p.buildOutput = append(p.buildOutput, e.Output)
		}
		return nil, nil
	}
	if e.Package == "" {
		return nil, nil
	}
	p := r.pkg(e.Package)
	if m := toolchainLine.FindStringSubmatch(e.Output); m != nil {
		p.toolchain[m[1]] = true
	}
	if e.Test == "" {
		switch e.Action {
		case "output":
			p.output = append(p.output, e.Output)
		case "pass", "fail", "skip":
			p.action, p.elapsed = e.Action, e.Elapsed
			return nil, p
		}
		return nil, nil
	}
	key := e.Package + " " + e.Test
	t, ok := r.tests[key]
	if !ok {
		t = &testResult{pkg: e.Package, name: e.Test}
		r.tests[key] = t
		r.order = append(r.order, key)
	}
	switch e.Action {
	case "output":
		t.output = append(t.output, e.Output)
	case "pass", "fail", "skip":
		t.action = e.Action
		switch e.Action {
		case "pass":
			p.passed++
		case "fail":
			p.failed++
		case "skip":
			p.skipped++
		}
		return t, nil
	}
	return nil, nil
}

// readRun reads a whole run. Lines that are not JSON (a crash's output) are kept as package output.
func readRun(in io.Reader) (*run, error) {
	r := newRun()
	err := eachEvent(in, func(e event, raw string) {
		if raw != "" {
			return
		}
		r.add(e)
	})
	return r, err
}

// eachEvent calls f for every line of in: with the decoded event, or with raw set to a line
// that is not an event.
func eachEvent(in io.Reader, f func(e event, raw string)) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		var e event
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil {
			f(event{}, line+"\n")
			continue
		}
		f(e, "")
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read go test -json: %w", err)
	}
	return nil
}

// skipReason is the message a skipped test gave: its output less the lines go test adds.
func skipReason(output []string) string {
	var lines []string
	for _, o := range output {
		line := strings.TrimSpace(o)
		if line == "" || strings.HasPrefix(line, "=== ") || strings.HasPrefix(line, "--- ") || toolchainLine.MatchString(line) {
			continue
		}
		lines = append(lines, stripLocation(line))
	}
	if len(lines) == 0 {
		return "(no reason given)"
	}
	return strings.Join(lines, " / ")
}

// location is the "file_test.go:12: " prefix testing puts before a logged line.
var location = regexp.MustCompile(`^[^\s:]+\.go:\d+: `)

func stripLocation(line string) string {
	return location.ReplaceAllString(line, "")
}

// skips returns the skipped tests, in the order they ran.
func (r *run) skips() []*testResult {
	var out []*testResult
	for _, key := range r.order {
		if t := r.tests[key]; t.action == "skip" {
			out = append(out, t)
		}
	}
	return out
}

// toolchain returns a package's reported tools, sorted.
func (p *pkgResult) toolchainList() []string {
	out := make([]string, 0, len(p.toolchain))
	for k := range p.toolchain {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
