package parallel

import (
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

func TestEach_callsEveryIndexOnce(t *testing.T) {
	for _, limit := range []int{0, 1, 3, 100} {
		seen := make([]int32, 50)
		Each(len(seen), limit, func(i int) { atomic.AddInt32(&seen[i], 1) })
		for i, n := range seen {
			if n != 1 {
				t.Errorf("limit %d: index %d called %d times, want once", limit, i, n)
			}
		}
	}
}

func TestEach_neverRunsMoreThanTheLimit(t *testing.T) {
	const limit = 3
	var running, most atomic.Int32
	Each(20, limit, func(int) {
		now := running.Add(1)
		for {
			seen := most.Load()
			if now <= seen || most.CompareAndSwap(seen, now) {
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
		running.Add(-1)
	})
	if got := most.Load(); got > limit {
		t.Errorf("%d calls ran at once, want at most %d", got, limit)
	}
	if got := most.Load(); got < 2 {
		t.Errorf("at most %d call ran at once, want calls side by side", got)
	}
}

func TestEach_oneAtATimeRunsInOrderOnTheCaller(t *testing.T) {
	var order []int
	Each(5, 1, func(i int) { order = append(order, i) })
	if !slices.Equal(order, []int{0, 1, 2, 3, 4}) {
		t.Errorf("order %v, want 0 to 4", order)
	}
}

func TestChunks_coversEveryItemOnce(t *testing.T) {
	for _, n := range []int{0, 1, minPerCall - 1, minPerCall, 2*minPerCall - 1, 2 * minPerCall, 1000, 1001} {
		seen := make([]int32, n)
		var calls atomic.Int32
		Chunks(n, func(start, end int) {
			calls.Add(1)
			if start >= end {
				t.Errorf("n=%d: empty range [%d, %d)", n, start, end)
			}
			for i := start; i < end; i++ {
				atomic.AddInt32(&seen[i], 1)
			}
		})
		for i, c := range seen {
			if c != 1 {
				t.Errorf("n=%d: item %d covered %d times, want once", n, i, c)
			}
		}
		if limit := int32(max(runtime.GOMAXPROCS(0), 1)); calls.Load() > limit {
			t.Errorf("n=%d: %d ranges, want at most one per core (%d)", n, calls.Load(), limit)
		}
	}
}

func TestChunks_splitsAcrossCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var calls atomic.Int32
	Chunks(4*minPerCall, func(int, int) { calls.Add(1) })
	if got := calls.Load(); got != 4 {
		t.Errorf("%d ranges over 4 cores and %d items, want 4", got, 4*minPerCall)
	}
	calls.Store(0)
	Chunks(minPerCall, func(int, int) { calls.Add(1) })
	if got := calls.Load(); got != 1 {
		t.Errorf("%d ranges for %d items, want 1: fewer items than two ranges need stay together", got, minPerCall)
	}
}
