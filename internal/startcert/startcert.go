// Package startcert builds, on the second core while the provider's packages initialize, the
// table of the curve go-plugin generates each process's certificate on.
//
// Terraform starts the provider with automatic mTLS (PLUGIN_CLIENT_CERT set), and before the
// provider answers, go-plugin generates a P-521 key and a certificate for the connection. The
// first key on that curve in a process builds the curve's table of multiples of its generator
// (Go builds it once per process, on first use): about half of the certificate's cost, 5 to 7 ms
// of each of the three starts of a plan. Started here, it is built while the packages that sort
// after this one initialize (some 50 ms on one core), and go-plugin finds it built. The key
// generated to build it is dropped. Without PLUGIN_CLIENT_CERT (the report mode, a debugger)
// nothing is started.
package startcert

import (
	"crypto/ecdh"
	"crypto/rand"
	"os"
)

// started is the warm-up of this process, nil when none was started.
var started = start(os.Getenv)

// start begins building the curve's table when getenv says Terraform asks for automatic mTLS,
// and returns what reports the end of it (nil when nothing was started).
func start(getenv func(string) string) <-chan error {
	if getenv("PLUGIN_CLIENT_CERT") == "" {
		return nil
	}
	done := make(chan error, 1)
	go func() {
		_, err := ecdh.P521().GenerateKey(rand.Reader)
		done <- err
	}()
	return done
}
