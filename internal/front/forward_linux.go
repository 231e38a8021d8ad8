package front

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/rpc"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// schemaMethod is the call the front answers itself, from the answer it carries.
const schemaMethod = "/tfplugin6.Provider/GetProviderSchema"

// Main serves Terraform's calls in this process: passed on to the command's engine, or, when
// the engine cannot be shared (DirectReason, or no usable socket folder), by running the engine
// in its place.
func Main(hooks Hooks) {
	log := OpenEventLog(os.Getenv(LogVariable))
	self, err := os.Executable()
	if err != nil {
		fatal(err)
	}
	engine := EngineBeside(self)
	if _, err := os.Stat(engine); err != nil {
		fatal(fmt.Errorf("the provider's package is incomplete: its engine %s is missing (%w); run terraform init -upgrade to install the package again", engine, err))
	}
	if reason := DirectReason(os.Args, os.Getenv); reason != "" {
		runDirectly(engine, reason, log, hooks)
	}
	s, err := newSession(engine, log)
	if err != nil {
		runDirectly(engine, err.Error(), log, hooks)
	}
	// The original standard error: go-plugin's Serve replaces os.Stderr with a stream Terraform
	// may not read, and a crash's output must reach the file Terraform reads it from.
	stderr := os.Stderr
	up := newUpstream(s, stderr, hooks)
	go up.connect()
	conn, err := grpc.NewClient("passthrough:///engine",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(up.dial),
		// Never idle: a closed connection could not be opened again (upstream).
		grpc.WithIdleTimeout(0),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessage), grpc.MaxCallSendMsgSize(MaxMessage)))
	if err != nil {
		fatal(err)
	}
	serve := &plugin.ServeConfig{
		HandshakeConfig: plugin.HandshakeConfig{
			ProtocolVersion:  6,
			MagicCookieKey:   "TF_PLUGIN_MAGIC_COOKIE",
			MagicCookieValue: "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
		},
		Plugins: plugin.PluginSet{"provider": passthrough{}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts,
				grpc.ForceServerCodec(codec{}),
				grpc.UnknownServiceHandler(forward(conn, up)),
				grpc.MaxRecvMsgSize(MaxMessage), grpc.MaxSendMsgSize(MaxMessage))...)
		},
	}
	if clientPEM := os.Getenv(clientCertVariable); clientPEM != "" {
		// Automatic mTLS with a certificate of the front's own making (mtls_linux.go); should it
		// fail, go-plugin makes its own.
		warmClientCurve()
		if config, der, err := autoMTLS(clientPEM); err == nil && certifyHandshake(os.Stdout, der) == nil {
			serve.TLSProvider = func() (*tls.Config, error) { return config, nil }
		}
	}
	plugin.Serve(serve)
	up.exit(0)
}

// runDirectly replaces this process with the engine, which then serves Terraform as a provider
// without a front does.
func runDirectly(engine, reason string, log *EventLog, hooks Hooks) {
	log.Printf("front %d runs the engine directly: %s", os.Getpid(), reason)
	if hooks.AtExit != nil {
		hooks.AtExit()
	}
	err := syscall.Exec(engine, append([]string{engine}, os.Args[1:]...), os.Environ())
	fatal(fmt.Errorf("run the provider's engine %s: %w", engine, err))
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, err.Error())
	os.Exit(1)
}

// upstream is the front's one connection to the engine. The engine serves each connection a
// provider of its own, so a second connection would reach a provider Terraform never configured:
// the front dials once, and a lost connection ends the front as a crash of the provider would.
type upstream struct {
	s      *session
	stderr *os.File
	hooks  Hooks
	ready  chan struct{}
	conn   net.Conn
	err    error
	used   atomic.Bool
	lost   atomic.Bool
	once   sync.Once
}

func newUpstream(s *session, stderr *os.File, hooks Hooks) *upstream {
	return &upstream{s: s, stderr: stderr, hooks: hooks, ready: make(chan struct{})}
}

// connect connects to the engine, starting it if need be; begun as the front starts, while
// go-plugin and Terraform shake hands.
func (u *upstream) connect() {
	c, err := u.s.connect()
	if err == nil {
		c = &watchedConn{Conn: c, lost: &u.lost}
	}
	u.conn, u.err = c, err
	close(u.ready)
}

// dial hands gRPC the connection once.
func (u *upstream) dial(ctx context.Context, _ string) (net.Conn, error) {
	select {
	case <-u.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if u.err != nil {
		return nil, u.err
	}
	if u.used.Swap(true) {
		u.lost.Store(true)
		return nil, errors.New("the connection to the provider's engine was lost")
	}
	return u.conn, nil
}

// failed reports err, from a call passed on, as Terraform should see it: when the engine's
// connection is lost (the engine crashed or was killed), the engine's output goes to the
// front's standard error and the front exits, as the provider itself would have.
func (u *upstream) failed(err error) error {
	<-u.ready
	if u.err != nil {
		return status.Errorf(codes.Unavailable, "%v; set %s=0 to run the provider without sharing its engine", u.err, OptOut)
	}
	if !u.lost.Load() {
		return err
	}
	// Give the engine's last words a moment to reach its file.
	time.Sleep(50 * time.Millisecond)
	fmt.Fprintln(u.stderr, CrashReport(u.s.engine, crashText(u.s.files.Err)))
	u.exit(2)
	return err
}

func (u *upstream) exit(code int) {
	u.once.Do(func() {
		if u.hooks.AtExit != nil {
			u.hooks.AtExit()
		}
	})
	os.Exit(code)
}

// watchedConn records that the connection ended: a read or write failing.
type watchedConn struct {
	net.Conn
	lost *atomic.Bool
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.lost.Store(true)
	}
	return n, err
}

func (c *watchedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err != nil {
		c.lost.Store(true)
	}
	return n, err
}

// frame is a message passed on as it is, never decoded.
type frame struct{ data []byte }

// codec passes frames on as they are and encodes go-plugin's own messages.
type codec struct{}

func (codec) Marshal(v any) ([]byte, error) {
	if f, ok := v.(*frame); ok {
		return f.data, nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("cannot encode %T", v)
	}
	return proto.Marshal(m)
}

func (codec) Unmarshal(data []byte, v any) error {
	if f, ok := v.(*frame); ok {
		f.data = append([]byte(nil), data...)
		return nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("cannot decode into %T", v)
	}
	return proto.Unmarshal(data, m)
}

func (codec) Name() string { return "proto" }

// forward serves every call of a service the front does not register (Terraform's provider
// protocol) by passing it to the engine, message by message, both ways; the schema it answers
// itself.
func forward(up *grpc.ClientConn, u *upstream) grpc.StreamHandler {
	return func(_ any, ss grpc.ServerStream) error {
		method, _ := grpc.MethodFromServerStream(ss)
		if method == schemaMethod {
			f := &frame{}
			if err := ss.RecvMsg(f); err != nil {
				return err
			}
			return ss.SendMsg(&frame{data: schemaAnswer})
		}
		ctx, cancel := context.WithCancel(ss.Context())
		defer cancel()
		if md, ok := metadata.FromIncomingContext(ss.Context()); ok {
			ctx = metadata.NewOutgoingContext(ctx, md.Copy())
		}
		cs, err := up.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method,
			grpc.ForceCodec(codec{}))
		if err != nil {
			return u.failed(err)
		}
		go func() {
			for {
				f := &frame{}
				if err := ss.RecvMsg(f); err != nil {
					_ = cs.CloseSend()
					return
				}
				if err := cs.SendMsg(f); err != nil {
					return
				}
			}
		}()
		for first := true; ; first = false {
			f := &frame{}
			if err := cs.RecvMsg(f); err != nil {
				ss.SetTrailer(cs.Trailer())
				if errors.Is(err, io.EOF) {
					return nil
				}
				return u.failed(err)
			}
			if first {
				if h, err := cs.Header(); err == nil {
					_ = ss.SendHeader(h)
				}
			}
			if err := ss.SendMsg(f); err != nil {
				return err
			}
		}
	}
}

// passthrough is the plugin go-plugin serves: no service registered, every call forwarded.
type passthrough struct{}

func (passthrough) Server(*plugin.MuxBroker) (any, error) { return nil, errors.New("gRPC only") }
func (passthrough) Client(*plugin.MuxBroker, *rpc.Client) (any, error) {
	return nil, errors.New("gRPC only")
}
func (passthrough) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error { return nil }
func (passthrough) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("a front serves; it is no client")
}
