package front

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The socket folder is created private, and one found open to others or as a link is refused:
// the front then runs the engine directly.
func TestSocketDir_refusesAFolderOthersCouldUse(t *testing.T) {
	uid := os.Getuid()
	tmp := t.TempDir()
	dir, err := socketDir(tmp, uid)
	if err != nil {
		t.Fatalf("a new socket folder: %v", err)
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("the socket folder's mode: %v, %v; want 0700", info.Mode(), err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := socketDir(tmp, uid); err == nil || !strings.Contains(err.Error(), "only its owner") {
		t.Errorf("a socket folder others may read was used (%v)", err)
	}
	linked := t.TempDir()
	target := t.TempDir()
	if err := os.Symlink(target, filepath.Join(linked, SocketDirName(uid))); err != nil {
		t.Fatal(err)
	}
	if _, err := socketDir(linked, uid); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a socket folder that is a link was used (%v)", err)
	}
	if _, err := socketDir(tmp, uid+1); err == nil || !strings.Contains(err.Error(), "owned by user") {
		t.Errorf("a socket folder of another user was used (%v)", err)
	}
}

func TestProcessStart_tellsAProcessFromOneThatHadItsPID(t *testing.T) {
	start, err := ProcessStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !Running(os.Getpid(), start) {
		t.Error("this process is not running by its own start time")
	}
	if Running(os.Getpid(), start+"1") {
		t.Error("a process that had this PID before counts as running")
	}
}
