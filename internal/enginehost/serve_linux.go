package enginehost

import (
	"errors"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	"google.golang.org/grpc"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/front"
)

// Idle is how long the engine waits without a connection, its Terraform process alive, before it
// stops: longer than Terraform's pauses between a command's provider processes. A front that
// comes later starts another engine.
const Idle = 30 * time.Second

// poll is how often the engine looks for a connection and for its Terraform process.
const poll = 20 * time.Millisecond

// Serve serves the provider to the fronts of the command named by the environment, each
// connection its own server made by newServer, and returns when the engine stops.
func Serve(getenv func(string) string, name string, newServer func() tfprotov6.ProviderServer) error {
	// As go-plugin does for a provider process: Terraform's process group gets the user's
	// interrupt, and Terraform, not the provider, decides what it stops.
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	go func() {
		for range interrupts {
		}
	}()
	log := front.OpenEventLog(getenv(front.LogVariable))
	files := front.FilesOf(getenv(front.EnvSocket))
	owner := getenv(front.EnvOwner)
	ownerPID, ownerStart, err := front.OwnerPID(owner)
	if err != nil {
		return err
	}
	handed := handedLock(getenv(front.EnvLockFD))
	l, err := listen(files.Socket)
	// The starting front's lock, held until now: the next front connects rather than starts.
	if handed != nil {
		_ = handed.Close()
	}
	if errors.Is(err, errServed) {
		return nil
	}
	if err != nil {
		return err
	}
	log.Printf("engine %d serves %s at %s", os.Getpid(), owner, files.Socket)
	go sweep(filepath.Dir(files.Socket), owner)
	e := &engine{l: l, files: files, log: log, name: name, newServer: newServer, idle: Idle, last: time.Now()}
	return e.run(func() bool { return front.Running(ownerPID, ownerStart) })
}

// errServed says another engine already serves the command.
var errServed = errors.New("another engine serves this command")

// handedLock returns the lock a front handed over, if any.
func handedLock(fd string) *os.File {
	n, err := strconv.Atoi(fd)
	if err != nil || n < 3 {
		return nil
	}
	return os.NewFile(uintptr(n), "lock")
}

// listen listens at socket, unless an engine already does.
func listen(socket string) (*net.UnixListener, error) {
	if c, err := net.Dial("unix", socket); err == nil {
		_ = c.Close()
		return nil, errServed
	}
	_ = os.Remove(socket)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		return nil, err
	}
	// Listener.Close must not remove the file: the engine removes it itself, holding the lock.
	l.SetUnlinkOnClose(false)
	return l, nil
}

// sweep removes the files of engines whose Terraform process is gone (an engine killed before it
// could), other than owner's.
func sweep(dir, owner string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		o := front.OwnerOf(e.Name())
		if o == "" || o == owner {
			continue
		}
		pid, start, err := front.OwnerPID(o)
		if err != nil || front.Running(pid, start) {
			continue
		}
		_ = os.Remove(filepath.Join(dir, e.Name()))
	}
}

type engine struct {
	l         *net.UnixListener
	files     front.Files
	log       interface{ Printf(string, ...any) }
	name      string
	newServer func() tfprotov6.ProviderServer
	idle      time.Duration
	// stopping, when set, runs as the engine begins to stop (a test's front connecting then).
	stopping func()

	mu    sync.Mutex
	open  int
	last  time.Time
	count int
}

// run accepts connections until the engine may stop: no connection open, and Terraform gone or
// nothing connected for Idle. Before it stops it takes the lock and accepts what is queued, so a
// front that connected meanwhile is served, not refused.
func (e *engine) run(alive func() bool) error {
	for {
		_ = e.l.SetDeadline(time.Now().Add(poll))
		c, err := e.l.Accept()
		if err == nil {
			e.serve(c)
			continue
		}
		if !isTimeout(err) {
			return err
		}
		e.mu.Lock()
		open, idle := e.open, time.Since(e.last)
		e.mu.Unlock()
		if open > 0 {
			continue
		}
		gone := !alive()
		if !gone && idle < e.idle {
			continue
		}
		stopped, err := e.stop(gone)
		if stopped || err != nil {
			return err
		}
	}
}

// stop stops the engine unless a front connected since the last look; it reports whether it did.
func (e *engine) stop(ownerGone bool) (bool, error) {
	if e.stopping != nil {
		e.stopping()
	}
	lock, err := os.OpenFile(e.files.Lock, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return false, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		// A front holds it: it is about to connect.
		return false, nil
	}
	// Not a deadline already past: Accept would then return before it looks.
	_ = e.l.SetDeadline(time.Now().Add(time.Millisecond))
	if c, err := e.l.Accept(); err == nil {
		e.serve(c)
		return false, nil
	}
	_ = os.Remove(e.files.Socket)
	_ = e.l.Close()
	if ownerGone {
		// No front of this command comes again.
		_ = os.Remove(e.files.Lock)
		_ = os.Remove(e.files.Err)
	}
	e.mu.Lock()
	count := e.count
	e.mu.Unlock()
	e.log.Printf("engine %d stops after %d connections (Terraform gone: %t)", os.Getpid(), count, ownerGone)
	return true, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// serve serves one front's connection a provider server of its own until the front closes it.
func (e *engine) serve(c net.Conn) {
	e.mu.Lock()
	e.open++
	e.count++
	n := e.count
	e.mu.Unlock()
	e.log.Printf("engine %d connection %d", os.Getpid(), n)
	go func() {
		defer func() {
			e.mu.Lock()
			e.open--
			e.last = time.Now()
			e.mu.Unlock()
		}()
		srv := grpc.NewServer(grpc.MaxRecvMsgSize(front.MaxMessage), grpc.MaxSendMsgSize(front.MaxMessage))
		if err := (&tf6server.GRPCProviderPlugin{GRPCProvider: e.newServer, Name: e.name}).GRPCServer(nil, srv); err != nil {
			_ = c.Close()
			return
		}
		one := newOneConn(c)
		go func() {
			<-one.done
			srv.Stop()
		}()
		_ = srv.Serve(one)
	}()
}

// oneConn is a listener that hands out one connection, then waits until it is closed.
type oneConn struct {
	conn net.Conn
	mu   sync.Mutex
	used bool
	done chan struct{}
	once sync.Once
}

func newOneConn(c net.Conn) *oneConn { return &oneConn{conn: c, done: make(chan struct{})} }

func (o *oneConn) Accept() (net.Conn, error) {
	o.mu.Lock()
	if !o.used {
		o.used = true
		o.mu.Unlock()
		return &closeNotify{Conn: o.conn, o: o}, nil
	}
	o.mu.Unlock()
	<-o.done
	return nil, net.ErrClosed
}

func (o *oneConn) Close() error {
	o.once.Do(func() { close(o.done) })
	return nil
}

func (o *oneConn) Addr() net.Addr { return o.conn.LocalAddr() }

// closeNotify closes the listener with the connection: the server then stops.
type closeNotify struct {
	net.Conn
	o *oneConn
}

func (c *closeNotify) Close() error {
	err := c.Conn.Close()
	_ = c.o.Close()
	return err
}
