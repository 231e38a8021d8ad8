package kube

import (
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/rest"
)

// firstConnection holds a connection's requests until the first of them has its network
// connection. A provider process sends its first requests together (the probe, discovery and
// the first resource's reads), and Go's transport dials once for each request that finds no
// connection: eight TLS handshakes at once, each costing both ends a key exchange and the
// server's certificate, when the API server speaks HTTP/2 and the first connection carries
// them all (the others are closed unused). Held back until the first request has its
// connection, the others find it: one handshake. Against a server of HTTP/1.1 alone they then
// dial their own, as before, one handshake later. The requests wait for that handshake either
// way, so a held request is not later than it would have been.
type firstConnection struct {
	started atomic.Bool
	once    sync.Once
	ready   chan struct{}
}

func newFirstConnection() *firstConnection {
	return &firstConnection{ready: make(chan struct{})}
}

// wrap has every client built from cfg go through f: the clients of one connection share its
// transport, so one gate serves them all.
func (f *firstConnection) wrap(cfg *rest.Config) {
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return &firstConnectionTransport{f: f, next: next} })
}

// lead says whether the caller's request is the first; every later call says false.
func (f *firstConnection) lead() bool { return f.started.CompareAndSwap(false, true) }

// open lets every held request go, once the first has its connection or has failed.
func (f *firstConnection) open() { f.once.Do(func() { close(f.ready) }) }

type firstConnectionTransport struct {
	f    *firstConnection
	next http.RoundTripper
}

func (t *firstConnectionTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.f.lead() {
		select {
		case <-t.f.ready:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
		return t.next.RoundTrip(req)
	}
	defer t.f.open()
	// WithClientTrace calls the hooks of a trace already in the context too.
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { t.f.open() },
	}))
	return t.next.RoundTrip(req)
}
