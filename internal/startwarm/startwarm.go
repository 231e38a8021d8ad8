// Package startwarm does, on the second core while the provider's packages initialize on the
// first, work that the start would otherwise do on the first core after them.
//
// Terraform starts the provider three times for a plan and four for an apply, and each start
// spends some 60 ms initializing packages on one core (Kubernetes' and Helm's schemes, JSON
// schema compilers) while the other waits. Two things of each start are done ahead there:
//   - The memory the initialization fills (about 9 MB, internal/startgc) is faulted in at once
//     with madvise(MADV_POPULATE_WRITE): a block of heap, populated, then freed by a collection, so
//     the allocations that follow reuse it. A start faults in about 2,500 pages of heap, each
//     about 10 µs on the virtual machine of BENCHMARKS.md (5 µs populated at once, and there on
//     the core that would otherwise wait). The block asks for huge pages first (MADV_HUGEPAGE),
//     so that it is ready in about a millisecond, before most of the initialization's
//     allocations, not after them.
//   - The table of the P-521 curve, which Go builds on a process's first key on that curve, is
//     built: go-plugin generates a P-521 key and certificate for Terraform's automatic mTLS before
//     the provider answers, and the table was half of that.
//
// It runs only in a process Terraform starts with automatic mTLS (PLUGIN_CLIENT_CERT set), not in
// the report mode or under a debugger. A kernel without MADV_POPULATE_WRITE (before Linux 5.14)
// just faults as before. main imports this package for that alone; it imports no project package,
// and Go initializes it early: after about 0.5 MB of the 9.4 MB the initialization allocates
// (GODEBUG=inittrace=1), before the module's large dependencies.
package startwarm

import (
	"crypto/ecdh"
	"crypto/rand"
	"errors"
	"os"
	"runtime"
)

// heapAhead is the heap faulted in ahead: more than the packages' initialization fills.
const heapAhead = 12 << 20

// started is the warm-up of this process, nil when none was started.
var started = start(os.Getenv)

// start begins the warm-up when getenv says Terraform asks for automatic mTLS, and returns what
// reports its end (nil when nothing was started).
func start(getenv func(string) string) <-chan error {
	if getenv("PLUGIN_CLIENT_CERT") == "" {
		return nil
	}
	done := make(chan error, 1)
	go func() {
		// Each step helps alone; one that fails does not stop the next.
		heapErr := populateHeap(heapAhead)
		if heapErr == nil {
			// Frees the block for the allocations that follow (the collector is otherwise off
			// during the initialization, internal/startgc).
			runtime.GC()
		}
		_, keyErr := ecdh.P521().GenerateKey(rand.Reader)
		done <- errors.Join(heapErr, keyErr)
	}()
	return done
}

// populateHeap allocates n bytes of heap, faults them in, and drops them.
func populateHeap(n int) error {
	return populate(make([]byte, n))
}
