// Package parallel runs independent calls at the same time: requests that each wait for a round
// trip through the GitLab agent's tunnel, and the parsing, projecting and writing of a large
// release's objects on every core.
package parallel

import (
	"runtime"
	"sync"
)

// Each calls do(i) for each i below n, at most limit calls at a time, and returns when all have
// returned. Each call writes only what its i owns. A limit below 1 is 1, and with one call at a
// time (or one call to make) do runs on the caller's goroutine, in order.
func Each(n, limit int, do func(i int)) {
	if limit <= 1 || n <= 1 {
		for i := range n {
			do(i)
		}
		return
	}
	slots := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			do(i)
		}()
	}
	wg.Wait()
}

// minPerCall is the least work, in items, handed to one goroutine by [Chunks]: parsing or
// writing one object takes tens of microseconds, a goroutine a microsecond, so fewer items per
// call would spend the cores on scheduling.
const minPerCall = 16

// Chunks calls do(start, end) over consecutive ranges that cover [0, n), one range per core at
// most and none shorter than minPerCall items unless n is, all at once, and returns when all
// have returned. With one core, or fewer items than two ranges need, it calls do(0, n) on the
// caller's goroutine. Each call writes only what its range owns.
func Chunks(n int, do func(start, end int)) {
	ranges := min(runtime.GOMAXPROCS(0), n/minPerCall)
	if ranges <= 1 {
		if n > 0 {
			do(0, n)
		}
		return
	}
	Each(ranges, ranges, func(r int) {
		do(r*n/ranges, (r+1)*n/ranges)
	})
}
