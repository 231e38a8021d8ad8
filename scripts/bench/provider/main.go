// Command provider serves the gitlabk8s provider exactly as the repository's main package does,
// plus two measurements for scripts/bench.sh, both off unless their variable is set:
//
//   - GITLABK8S_BENCH_RSS_FILE: on exit, append one line "<pid> <peak RSS KiB> <CPU ms>" from
//     getrusage: the process's peak resident set size and its user plus system CPU time, package
//     initialization included. Terraform starts the provider and, when done, asks it to stop over
//     gRPC; the server then returns from Serve and this runs.
//   - GITLABK8S_BENCH_CPUPROFILE_DIR: write a CPU profile of the whole process to
//     <dir>/cpu-<pid>.pprof, for `go tool pprof`.
//   - GITLABK8S_BENCH_TRACE_DIR: write an execution trace of the whole process to
//     <dir>/trace-<pid>.out, for `go tool trace`: which work waits for which, core by core.
//
// It lives here rather than in the provider's main so the shipped binary carries no measuring code.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"syscall"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/provider"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/startgc"
	// Work of the start done on the second core while the packages initialize.
	_ "github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/startwarm"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "bench"

func main() {
	// The collector was off while the packages initialized (internal/startgc).
	startgc.Restore()
	stopProfile, err := startRecording(os.Getenv("GITLABK8S_BENCH_CPUPROFILE_DIR"), "cpu", "pprof", pprof.StartCPUProfile, pprof.StopCPUProfile)
	if err != nil {
		log.Fatal(err.Error())
	}
	stopTrace, err := startRecording(os.Getenv("GITLABK8S_BENCH_TRACE_DIR"), "trace", "out", trace.Start, trace.Stop)
	if err != nil {
		log.Fatal(err.Error())
	}
	if err := provider.SilenceUnaskedLogs(os.LookupEnv, os.Setenv); err != nil {
		log.Fatal(err.Error())
	}
	err = providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: provider.RegistryAddress,
	})
	stopTrace()
	stopProfile()
	if rssErr := recordPeakRSS(os.Getenv("GITLABK8S_BENCH_RSS_FILE")); rssErr != nil {
		log.Print(rssErr.Error())
	}
	if err != nil {
		log.Fatal(err.Error())
	}
}

// startRecording starts a recording of the process (a CPU profile, an execution trace) into
// <dir>/<name>-<pid>.<ext> when dir is set, and returns the function that stops it and closes
// the file.
func startRecording(dir, name, ext string, start func(io.Writer) error, stop func()) (func(), error) {
	if dir == "" {
		return func() {}, nil
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.%s", name, os.Getpid(), ext)))
	if err != nil {
		return nil, fmt.Errorf("create %s file: %w", name, err)
	}
	if err := start(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return func() {
		stop()
		_ = f.Close()
	}, nil
}

// recordPeakRSS appends "<pid> <peak RSS in KiB> <CPU ms>" to path when path is set. One short
// write on an O_APPEND file, so provider processes running side by side never interleave lines.
func recordPeakRSS(path string) error {
	if path == "" {
		return nil
	}
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return fmt.Errorf("read peak rss: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open peak rss file: %w", err)
	}
	cpu := time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
	// On Linux ru_maxrss is in KiB.
	if _, err := fmt.Fprintf(f, "%d %d %d\n", os.Getpid(), usage.Maxrss, cpu.Milliseconds()); err != nil {
		_ = f.Close()
		return fmt.Errorf("write peak rss: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close peak rss file: %w", err)
	}
	return nil
}
