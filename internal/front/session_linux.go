package front

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// startTimeout bounds how long a front waits for the engine to listen, or for another front
// starting it.
const startTimeout = 30 * time.Second

// session is one front's view of its command's engine.
type session struct {
	engine string
	owner  string
	files  Files
	log    *EventLog
}

// newSession works out the command's engine files: the owner is the front's parent, Terraform.
func newSession(engine string, log *EventLog) (*session, error) {
	info, err := os.Stat(engine)
	if err != nil {
		return nil, err
	}
	ppid := os.Getppid()
	start, err := ProcessStart(ppid)
	if err != nil {
		return nil, err
	}
	dir, err := socketDir(os.TempDir(), os.Getuid())
	if err != nil {
		return nil, err
	}
	owner := Owner(ppid, start)
	files, err := FilesIn(dir, owner, EngineID(engine, info.Size(), info.ModTime().UnixNano()))
	if err != nil {
		return nil, err
	}
	return &session{engine: engine, owner: owner, files: files, log: log}, nil
}

// socketDir creates the user's socket folder under tmp when missing, and checks the one found.
func socketDir(tmp string, uid int) (string, error) {
	dir := filepath.Join(tmp, SocketDirName(uid))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return "", fmt.Errorf("%s: no owner", dir)
	}
	if err := DirMode(info.IsDir(), info.Mode()&fs.ModeSymlink != 0, int(st.Uid), uid, uint32(info.Mode().Perm())); err != nil {
		return "", fmt.Errorf("%s %w", dir, err)
	}
	return dir, nil
}

// connect returns a connection to the command's engine, started first when none listens. The
// lock file serializes fronts and the engine: a front holds it while it dials or starts the
// engine, and hands it to the engine it starts, which lets it go once it listens; an engine takes
// it before it stops, so a front that connected is always accepted.
func (s *session) connect() (net.Conn, error) {
	lock, err := lockFile(s.files.Lock, startTimeout)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if c, err := net.Dial("unix", s.files.Socket); err == nil {
		s.log.Printf("front %d connected to the engine at %s", os.Getpid(), s.files.Socket)
		return c, nil
	}
	errOut, err := os.OpenFile(s.files.Err, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	defer errOut.Close()
	cmd := exec.Command(s.engine)
	cmd.Env = append(os.Environ(),
		EnvSocket+"="+s.files.Socket,
		EnvOwner+"="+s.owner,
		// The lock, handed over: file descriptor 3 in the engine.
		EnvLockFD+"=3",
		"PLUGIN_CLIENT_CERT=")
	cmd.Stderr = errOut
	cmd.ExtraFiles = []*os.File{lock}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the provider's engine %s: %w", s.engine, err)
	}
	s.log.Printf("front %d started the engine %d for %s", os.Getpid(), cmd.Process.Pid, s.owner)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Our copy of the lock goes; the engine's holds it until it listens.
	_ = lock.Close()
	deadline := time.Now().Add(startTimeout)
	for {
		if c, err := net.Dial("unix", s.files.Socket); err == nil {
			return c, nil
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("the provider's engine %s exited before it listened (%v)%s", s.engine, err, crashText(s.files.Err))
		case <-time.After(2 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the provider's engine %s did not listen within %s", s.engine, startTimeout)
		}
	}
}

// lockFile opens path and takes an exclusive lock on it, waiting at most timeout.
func lockFile(path string, timeout time.Duration) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// crashText returns what the engine wrote to its standard error, introduced, or "".
func crashText(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ""
	}
	// The start: a panic's message and the goroutine that panicked come first.
	const most = 64 << 10
	if len(b) > most {
		b = b[:most]
	}
	return ":\n" + string(b)
}

// ProcessStart returns the start time of the process pid (StartTime of its /proc/<pid>/stat).
func ProcessStart(pid int) (string, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	return StartTime(string(stat))
}

// Running reports whether the process pid, started at start, still runs.
func Running(pid int, start string) bool {
	got, err := ProcessStart(pid)
	return err == nil && got == start
}
