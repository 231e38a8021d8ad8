// Package record holds the measurements scripts/bench.sh asks the bench's builds of the provider
// and of its front for: a CPU profile or an execution trace of the whole process, and on exit one
// line with the process's peak RSS and CPU time.
package record

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Start starts a recording of the process (a CPU profile, an execution trace) into
// <dir>/<name>-<pid>.<ext> when dir is set, and returns the function that stops it and closes
// the file.
func Start(dir, name, ext string, start func(io.Writer) error, stop func()) (func(), error) {
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

// PeakRSS appends "<pid> <peak RSS in KiB> <CPU ms> <role>" to path when path is set (role: the
// process's part, "front", "engine" or "provider"). One short
// write on an O_APPEND file, so provider processes running side by side never interleave lines.
func PeakRSS(path, role string) error {
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
	if _, err := fmt.Fprintf(f, "%d %d %d %s\n", os.Getpid(), usage.Maxrss, cpu.Milliseconds(), role); err != nil {
		_ = f.Close()
		return fmt.Errorf("write peak rss: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close peak rss file: %w", err)
	}
	return nil
}
