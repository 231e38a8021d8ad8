// Command front is the provider's front (cmd/front) plus the peak-RSS record scripts/bench.sh asks
// for (scripts/bench/record): on exit, with GITLABK8S_BENCH_RSS_FILE set, one line
// "<pid> <peak RSS KiB> <CPU ms> front". A front that runs the engine directly in its place
// writes its line before it does.
package main

import (
	"log"
	"os"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/front"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/scripts/bench/record"
)

func main() {
	front.Main(front.Hooks{AtExit: func() {
		if err := record.PeakRSS(os.Getenv("GITLABK8S_BENCH_RSS_FILE"), "front"); err != nil {
			log.Print(err.Error())
		}
	}})
}
