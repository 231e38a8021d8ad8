// Command testsummary reads `go test -json` and keeps a long test run readable and its skips
// visible. scripts/test.sh uses it for `make test`.
//
//	go test -json ./... | tee unit.json | testsummary stream [-tests]
//
// prints what plain `go test` prints (one line per package, and the whole output of every
// failed test) as the run goes, with -tests also one line per finished top-level test, and
//
//	testsummary report -expected 'set TF_ACC=1' unit=unit.json acceptance=acceptance.json
//
// prints, per run, each package's counts and the tools its tests reported using (a test logs
// "toolchain: NAME=PATH"), then every skipped test with its reason. Skips whose reason matches
// -expected are counted, not listed: in the unit run the acceptance tests skip by design and
// run in the next one.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "stream":
		flags := flag.NewFlagSet("stream", flag.ExitOnError)
		tests := flags.Bool("tests", false, "also print one line per finished top-level test")
		_ = flags.Parse(os.Args[2:])
		if err := stream(os.Stdin, os.Stdout, *tests); err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(1)
		}
	case "report":
		flags := flag.NewFlagSet("report", flag.ExitOnError)
		expected := flags.String("expected", "", "regular expression: skips whose reason matches are counted, not listed, in the run labelled `unit`")
		_ = flags.Parse(os.Args[2:])
		var expectedRE *regexp.Regexp
		if *expected != "" {
			var err error
			if expectedRE, err = regexp.Compile(*expected); err != nil {
				fmt.Fprintln(os.Stderr, "testsummary: -expected:", err)
				os.Exit(2)
			}
		}
		if err := report(os.Stdout, flags.Args(), expectedRE); err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(1)
		}
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: testsummary stream [-tests] < go-test.json\n       testsummary report [-expected REGEXP] LABEL=go-test.json...")
	os.Exit(2)
}

// report reads each LABEL=FILE run and writes its summary.
func report(w io.Writer, runs []string, expected *regexp.Regexp) error {
	for _, arg := range runs {
		label, path, ok := strings.Cut(arg, "=")
		if !ok {
			return fmt.Errorf("want LABEL=FILE, got %q", arg)
		}
		f, err := os.Open(path)
		if os.IsNotExist(err) {
			fmt.Fprintf(w, "\n%s: did not run\n", label)
			continue
		}
		if err != nil {
			return err
		}
		run, err := readRun(f)
		_ = f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		writeSummary(w, label, run, expected)
	}
	return nil
}
