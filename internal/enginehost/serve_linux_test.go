package enginehost

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/front"
)

type quietLog struct{}

func (quietLog) Printf(string, ...any) {}

// runningEngine is an engine on a socket in a test folder, its owner alive until told otherwise.
type runningEngine struct {
	socket, lock string
	servers      atomic.Int32
	ownerAlive   atomic.Bool
	stopped      chan error
}

func startEngine(t *testing.T, idle time.Duration) *runningEngine {
	t.Helper()
	dir := t.TempDir()
	r := &runningEngine{socket: filepath.Join(dir, "1-2-e.sock"), lock: filepath.Join(dir, "1-2-e.lock"), stopped: make(chan error, 1)}
	r.ownerAlive.Store(true)
	l, err := listen(r.socket)
	if err != nil {
		t.Fatal(err)
	}
	e := &engine{l: l, files: front.FilesOf(r.socket), log: quietLog{}, name: "registry.terraform.io/gitlabk8s/gitlabk8s", idle: idle, last: time.Now(),
		newServer: func() tfprotov6.ProviderServer { r.servers.Add(1); return newProvider() }}
	go func() { r.stopped <- e.run(r.ownerAlive.Load) }()
	return r
}

// call asks the engine for the schema over conn, as a front passes Terraform's call on.
func call(t *testing.T, conn net.Conn) {
	t.Helper()
	used := false
	cc, err := grpc.NewClient("passthrough:///engine", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) {
			if used {
				return nil, net.ErrClosed
			}
			used = true
			return conn, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	req, resp := []byte{}, []byte{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cc.Invoke(ctx, "/tfplugin6.Provider/GetProviderSchema", &req, &resp, grpc.ForceCodec(rawCodec{})); err != nil {
		t.Fatalf("GetProviderSchema through the engine: %v", err)
	}
	if len(resp) == 0 {
		t.Fatal("the engine answered GetProviderSchema with nothing")
	}
}

func (r *runningEngine) dial(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", r.socket)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (r *runningEngine) assertRunning(t *testing.T, why string) {
	t.Helper()
	select {
	case err := <-r.stopped:
		t.Fatalf("the engine stopped (%v) %s", err, why)
	case <-time.After(5 * poll):
	}
}

func (r *runningEngine) assertStops(t *testing.T) {
	t.Helper()
	select {
	case err := <-r.stopped:
		if err != nil {
			t.Fatalf("the engine stopped with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the engine did not stop")
	}
	if _, err := os.Stat(r.socket); !os.IsNotExist(err) {
		t.Errorf("the engine left its socket behind (%v)", err)
	}
}

// Each front's connection gets a provider of its own, as each process of Terraform's would; the
// engine outlives Terraform while a front is connected, then stops and removes its files.
func TestEngine_servesEachConnectionItsOwnProviderUntilTerraformIsGone(t *testing.T) {
	r := startEngine(t, time.Hour)
	a, b := r.dial(t), r.dial(t)
	call(t, a)
	call(t, b)
	if n := r.servers.Load(); n != 2 {
		t.Fatalf("two connections got %d provider servers, want 2", n)
	}
	r.ownerAlive.Store(false)
	r.assertRunning(t, "while fronts were connected")
	_ = a.Close()
	r.assertRunning(t, "while a front was connected")
	_ = b.Close()
	r.assertStops(t)
	if _, err := os.Stat(r.lock); !os.IsNotExist(err) {
		t.Errorf("the engine left the lock of a Terraform process that is gone (%v)", err)
	}
}

// With Terraform alive, the engine waits for the next process's front, then stops when none came.
func TestEngine_stopsWhenIdle(t *testing.T) {
	r := startEngine(t, 10*poll)
	c := r.dial(t)
	call(t, c)
	_ = c.Close()
	r.assertStops(t)
	// The lock of a live command stays: a front may be waiting on it.
	if _, err := os.Stat(r.lock); err != nil {
		t.Errorf("the engine removed the lock of a Terraform process still running: %v", err)
	}
}

// A front holds the lock from its dial until the engine has it; an engine about to stop takes
// the lock first (waiting while a front holds it) and serves what connected before it had the
// lock, rather than refuse it.
func TestEngine_servesAFrontThatConnectedAsItWasStopping(t *testing.T) {
	dir := t.TempDir()
	socket, lockPath := filepath.Join(dir, "1-2-e.sock"), filepath.Join(dir, "1-2-e.lock")
	l, err := listen(socket)
	if err != nil {
		t.Fatal(err)
	}
	e := &engine{l: l, files: front.FilesOf(socket), log: quietLog{}, name: "registry.terraform.io/gitlabk8s/gitlabk8s", idle: time.Hour, last: time.Now(),
		newServer: newProvider}
	queued := make(chan net.Conn, 1)
	connected := false
	e.stopping = func() {
		if connected {
			return
		}
		connected = true
		// A front's whole turn, between the engine's last look and its lock.
		lock, err := lockFile(lockPath)
		if err != nil {
			t.Error(err)
			return
		}
		c, err := net.Dial("unix", socket)
		if err != nil {
			t.Error(err)
		}
		_ = lock.Close()
		queued <- c
	}
	alive := atomic.Bool{}
	stopped := make(chan error, 1)
	go func() { stopped <- e.run(alive.Load) }()
	r := &runningEngine{socket: socket, lock: lockPath, stopped: stopped}
	c := <-queued
	r.assertRunning(t, "with a front connected as it was stopping")
	if c == nil {
		t.Fatal("no front connected")
	}
	call(t, c)
	_ = c.Close()
	r.assertStops(t)
}

func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// The files of commands whose Terraform process is gone are removed as an engine starts; a live
// command's, and names of other kinds, are left.
func TestSweep_removesTheFilesOfCommandsThatAreGone(t *testing.T) {
	dir := t.TempDir()
	self, err := front.ProcessStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	live := front.Owner(os.Getpid(), self)
	// This process's PID with another start time: a process that had the PID before.
	gone := front.Owner(os.Getpid(), self+"1")
	names := map[string]bool{ // name -> kept
		live + "-e1.sock": true, live + "-e1.lock": true, live + "-e2.err": true,
		gone + "-e1.sock": false, gone + "-e1.lock": false, gone + "-e1.err": false,
		"notes.txt": true, "4242.sock.lock": true,
	}
	for name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sweep(dir, "1-2")
	for name, kept := range names {
		_, err := os.Stat(filepath.Join(dir, name))
		if kept != (err == nil) {
			t.Errorf("%s: kept %t, want %t", name, err == nil, kept)
		}
	}
}

// An engine killed (SIGKILL, the machine's out-of-memory killer) leaves its socket behind with
// nothing listening: the next engine of the command listens there, and the fronts reach it.
func TestListen_takesOverTheSocketOfAKilledEngine(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "1-2-e.sock")
	dead, err := net.ListenUnix("unix", &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	dead.SetUnlinkOnClose(false)
	_ = dead.Close()
	if _, err := os.Stat(socket); err != nil {
		t.Fatalf("the killed engine's socket is not left: %v", err)
	}
	l, err := listen(socket)
	if err != nil {
		t.Fatalf("listen over a dead engine's socket: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	accepted := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			_ = c.Close()
		}
		accepted <- err
	}()
	c, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatalf("a front cannot reach the new engine: %v", err)
	}
	_ = c.Close()
	if err := <-accepted; err != nil {
		t.Fatal(err)
	}
}

// An engine that serves the socket is left serving: a second one started for the same command
// stops at once, and the socket is still the first one's.
func TestListen_leavesALiveEngineServing(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "1-2-e.sock")
	live, err := listen(socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = live.Close() })
	go func() {
		for {
			c, err := live.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	if l, err := listen(socket); !errors.Is(err, errServed) {
		if l != nil {
			_ = l.Close()
		}
		t.Fatalf("listen over a live engine's socket = %v; want errServed", err)
	}
	c, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatalf("the live engine no longer answers: %v", err)
	}
	_ = c.Close()
}
