package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// The folders of killed runs are removed; those of running processes, and folders named otherwise,
// are kept.
func TestRemoveEndedProcessDirs_removesOnlyThoseOfEndedProcesses(t *testing.T) {
	const prefix = "gitlabk8s-provider-"
	dir := t.TempDir()
	folder := func(pid string) string {
		t.Helper()
		path := filepath.Join(dir, prefix+pid)
		if err := os.MkdirAll(filepath.Join(path, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	running := exec.Command("sleep", "60")
	if err := running.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = running.Process.Kill(); _ = running.Wait() })

	stale := folder(strconv.Itoa(ended.Process.Pid) + "-1")
	kept := []string{
		folder(strconv.Itoa(os.Getpid()) + "-2"),
		folder(strconv.Itoa(running.Process.Pid) + "-3"),
		folder("4185379011"), // an earlier run's name, without a process id
	}
	removeEndedProcessDirs(dir, prefix)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the folder of an ended process was kept: %v", err)
	}
	for _, k := range kept {
		if _, err := os.Stat(k); err != nil {
			t.Errorf("removed %s: %v", filepath.Base(k), err)
		}
	}
}
