// Command faultproxy puts internal/testing/faultproxy's TCP proxy in front of the local
// cluster's API server, as the GitLab agent's tunnel sits in front of a CI job's cluster, so
// that anything using the cluster's kubeconfig can be tried against a failing connection.
// cluster-up.sh starts it when GITLABK8S_FAULT_PROXY_PORT is set. TLS passes through: the
// kubeconfig names the proxy's address and verifies the API server's certificate as before.
//
// It adds -delay to every byte's way in each direction and resets every open connection each
// -reset-every (0: never). Signals break connections on demand: SIGUSR1 resets every open
// connection, SIGUSR2 stalls them all for -stall.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testing/faultproxy"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:16444", "address the clients connect to")
	upstream := flag.String("upstream", "127.0.0.1:16443", "the API server's host:port")
	delay := flag.Duration("delay", 0, "delay added to each direction of every connection")
	resetEvery := flag.Duration("reset-every", 0, "reset every open connection this often; 0 for never")
	stall := flag.Duration("stall", 10*time.Second, "how long SIGUSR2 stalls every connection")
	flag.Parse()

	proxy, err := faultproxy.StartOn(*listen, *upstream)
	if err != nil {
		log.Fatalf("faultproxy: %v", err)
	}
	defer proxy.Close()
	if *delay > 0 {
		if err := proxy.Delay(*delay); err != nil {
			log.Fatalf("faultproxy: %v", err)
		}
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	if *resetEvery > 0 {
		stop := proxy.ResetEvery(ctx, *resetEvery)
		defer func() { _ = stop() }()
	}
	log.Printf("faultproxy: %s to %s (delay %s each way, resets every %s; SIGUSR1 resets, SIGUSR2 stalls %s)",
		proxy.Addr(), *upstream, *delay, *resetEvery, *stall)

	faults := make(chan os.Signal, 1)
	signal.Notify(faults, syscall.SIGUSR1, syscall.SIGUSR2)
	for {
		select {
		case <-ctx.Done():
			return
		case sig := <-faults:
			var err error
			if sig == syscall.SIGUSR1 {
				err = proxy.ResetAll()
			} else {
				err = proxy.Stall(ctx, *stall)
			}
			if err != nil {
				log.Printf("faultproxy: %s: %v", sig, err)
			} else {
				log.Printf("faultproxy: %s done (%d resets so far)", sig, proxy.Resets())
			}
		}
	}
}
