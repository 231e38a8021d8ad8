package startgc

import (
	"os"
	"runtime/debug"
	"strconv"
	"testing"
)

func TestRestore_turnsTheCollectorBackOnAsTheProcessStarted(t *testing.T) {
	// Until Restore, the collector is off (a setting of -1).
	if off := debug.SetGCPercent(-1); off != -1 {
		t.Fatalf("before Restore the collector's setting is %d, want -1 (off)", off)
	}
	Restore()
	want := 100
	if v, err := strconv.Atoi(os.Getenv("GOGC")); err == nil {
		want = v
	} else if os.Getenv("GOGC") == "off" {
		want = -1
	}
	if got := debug.SetGCPercent(want); got != want {
		t.Errorf("after Restore the collector's setting is %d, want %d (GOGC=%q)", got, want, os.Getenv("GOGC"))
	}
}
