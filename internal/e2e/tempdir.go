package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ProcessTempDir makes a folder in the system's temporary folder for what a test process builds
// once and removes in its TestMain (a provider binary, a mirror of it), named prefix, the
// process's id, a dash and a random suffix. It first removes the folders of prefix whose process
// has ended: a test binary killed by its timeout never reaches its TestMain's cleanup.
func ProcessTempDir(prefix string) (string, error) {
	removeEndedProcessDirs(os.TempDir(), prefix)
	return os.MkdirTemp("", prefix+strconv.Itoa(os.Getpid())+"-")
}

// removeEndedProcessDirs removes the folders of prefix in dir whose process has ended. A folder
// without a process id and a dash after prefix is left alone.
func removeEndedProcessDirs(dir, prefix string) {
	folders, _ := filepath.Glob(filepath.Join(dir, prefix+"*"))
	for _, folder := range folders {
		pidText, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(folder), prefix), "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid == os.Getpid() || processRuns(pid) {
			continue
		}
		_ = os.RemoveAll(folder)
	}
}

// processRuns reports whether a process of that id runs (signal 0 is checked, never sent).
func processRuns(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
