// Command provider serves the gitlabk8s provider exactly as the repository's main package does,
// directly or as the engine a command's fronts share (internal/enginehost), plus measurements
// for scripts/bench.sh (scripts/bench/record), each off unless its variable is set:
//
//   - GITLABK8S_BENCH_RSS_FILE: on exit, append one line "<pid> <peak RSS KiB> <CPU ms> <role>"
//     from getrusage: the process's peak resident set size and its user plus system CPU time,
//     package initialization included; role is "engine" for a shared engine, which writes it once
//     Terraform is gone, and "provider" for a process Terraform started (or a front ran in its
//     place). Terraform starts the provider and, when done, asks it to stop over gRPC; the server
//     then returns from Serve and this runs.
//   - GITLABK8S_BENCH_CPUPROFILE_DIR: write a CPU profile of the whole process to
//     <dir>/cpu-<pid>.pprof, for `go tool pprof`.
//   - GITLABK8S_BENCH_TRACE_DIR: write an execution trace of the whole process to
//     <dir>/trace-<pid>.out, for `go tool trace`: which work waits for which, core by core.
//
// It lives here rather than in the provider's main so the shipped binary carries no measuring code.
package main

import (
	"context"
	"log"
	"os"
	"runtime/pprof"
	"runtime/trace"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/enginehost"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/provider"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/startgc"
	// Work of the start done on the second core while the packages initialize.
	_ "github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/startwarm"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/scripts/bench/record"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "bench"

func main() {
	// The collector was off while the packages initialized (internal/startgc).
	startgc.Restore()
	stopProfile, err := record.Start(os.Getenv("GITLABK8S_BENCH_CPUPROFILE_DIR"), "cpu", "pprof", pprof.StartCPUProfile, pprof.StopCPUProfile)
	if err != nil {
		log.Fatal(err.Error())
	}
	stopTrace, err := record.Start(os.Getenv("GITLABK8S_BENCH_TRACE_DIR"), "trace", "out", trace.Start, trace.Stop)
	if err != nil {
		log.Fatal(err.Error())
	}
	if err := provider.SilenceUnaskedLogs(os.LookupEnv, os.Setenv); err != nil {
		log.Fatal(err.Error())
	}
	role := "provider"
	if enginehost.Requested(os.Getenv) {
		role = "engine"
		err = enginehost.Serve(os.Getenv, provider.RegistryAddress, provider.NewServer(version))
	} else {
		err = providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
			Address: provider.RegistryAddress,
		})
	}
	stopTrace()
	stopProfile()
	if rssErr := record.PeakRSS(os.Getenv("GITLABK8S_BENCH_RSS_FILE"), role); rssErr != nil {
		log.Print(rssErr.Error())
	}
	if err != nil {
		log.Fatal(err.Error())
	}
}
