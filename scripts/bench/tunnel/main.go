// Command tunnel stands between the benchmark's clients and the API server as the GitLab agent's
// server (kas) does in a CI job: the clients' TLS ends at the tunnel, which passes every request
// on over a connection of its own, and the link from the clients to it adds a round-trip delay
// and a bandwidth limit (toxiproxy's latency and bandwidth toxics). It counts the requests it
// passes on and the bytes the clients receive, so a benchmark can say what a command asked and
// where the answers went.
//
// The tunnel serves the API server's own certificate (-cert, -key), whose addresses include
// 127.0.0.1, so a kubeconfig that names the tunnel's address with the cluster's CA verifies as
// before. Credentials (the bearer token) pass through unchanged.
//
// Its control address answers GET /reset (zero the counts) and GET /stats: one line
// "<requests>\t<bytes received by the clients>", then one line per kind of request,
// "<requests>\t<response body bytes>\t<kind>", most requests first.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address the clients connect to")
	upstream := flag.String("upstream", "", "the API server's URL, e.g. https://127.0.0.1:16443")
	caFile := flag.String("ca", "", "CA bundle that signed the API server's certificate")
	certFile := flag.String("cert", "", "serving certificate the clients verify (the API server's own)")
	keyFile := flag.String("key", "", "key of -cert")
	control := flag.String("control", "127.0.0.1:0", "address of the plain-HTTP control endpoint (/stats, /reset)")
	latency := flag.Duration("latency", 40*time.Millisecond, "round-trip delay added, half on each direction")
	rate := flag.String("rate", "20Mbit", "bandwidth of each direction, in Kbit, Mbit or Gbit per second; 0 for no limit")
	ready := flag.String("ready", "", "file to write the tunnel's and the control endpoint's addresses to, once both listen")
	flag.Parse()
	if err := run(config{
		listen: *listen, upstream: *upstream, caFile: *caFile, certFile: *certFile, keyFile: *keyFile,
		control: *control, latency: *latency, rate: *rate, ready: *ready,
	}); err != nil {
		log.Fatalf("tunnel: %v", err)
	}
}

type config struct {
	listen, upstream, caFile, certFile, keyFile, control string
	latency                                              time.Duration
	rate, ready                                          string
}

func run(cfg config) error {
	t, err := start(cfg)
	if err != nil {
		return err
	}
	if cfg.ready != "" {
		if err := os.WriteFile(cfg.ready, []byte(t.listen+"\n"+t.control+"\n"), 0o600); err != nil {
			return err
		}
	}
	log.Printf("tunnel: %s (latency %s, %s each way) to %s; control at %s", t.listen, cfg.latency, cfg.rate, cfg.upstream, t.control)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	return t.close()
}

// tunnel is a running tunnel: the clients' address and the control endpoint's.
type tunnel struct {
	listen, control string
	close           func() error
}

func start(cfg config) (*tunnel, error) {
	kbytesPerSecond, err := parseRate(cfg.rate)
	if err != nil {
		return nil, err
	}
	target, err := url.Parse(cfg.upstream)
	if err != nil || target.Host == "" {
		return nil, fmt.Errorf("-upstream %q: want the API server's URL", cfg.upstream)
	}
	ca, err := os.ReadFile(cfg.caFile)
	if err != nil {
		return nil, fmt.Errorf("-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("-ca %s holds no PEM certificate", cfg.caFile)
	}
	cert, err := tls.LoadX509KeyPair(cfg.certFile, cfg.keyFile)
	if err != nil {
		return nil, fmt.Errorf("-cert, -key: %w", err)
	}

	counts := newCounter()
	// The HTTP side: TLS ends here, requests are counted and passed on.
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 100,
	}
	// Watches stream: pass every event on as it comes.
	proxy.FlushInterval = -1
	proxy.ModifyResponse = func(resp *http.Response) error {
		resp.Body = &countingBody{ReadCloser: resp.Body, kind: requestKind(resp.Request), counts: counts}
		return nil
	}
	server := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			counts.request(requestKind(r))
			proxy.ServeHTTP(w, r)
		}),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: time.Minute,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() { _ = server.ServeTLS(&countingListener{Listener: inner, counts: counts}, "", "") }()

	// The TCP side: the clients' link, with its delay and bandwidth.
	toxics := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.New(io.Discard))
	link := toxiproxy.NewProxy(toxics, "apiserver", cfg.listen, inner.Addr().String())
	if err := link.Start(); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.listen, err)
	}
	for _, stream := range []string{"upstream", "downstream"} {
		if cfg.latency > 0 {
			if err := addToxic(link, "latency", stream, fmt.Sprintf(`{"latency": %d}`, (cfg.latency/2).Milliseconds())); err != nil {
				return nil, err
			}
		}
		if kbytesPerSecond > 0 {
			if err := addToxic(link, "bandwidth", stream, fmt.Sprintf(`{"rate": %d}`, kbytesPerSecond)); err != nil {
				return nil, err
			}
		}
	}

	ctl, err := net.Listen("tcp", cfg.control)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.control, err)
	}
	ctlServer := &http.Server{Handler: counts.handler(), ReadHeaderTimeout: time.Minute}
	go func() { _ = ctlServer.Serve(ctl) }()
	return &tunnel{listen: link.Listen, control: ctl.Addr().String(), close: func() error {
		link.Stop()
		_ = ctlServer.Close()
		return server.Close()
	}}, nil
}

// addToxic adds one toxic of kind to the link's stream, with its attributes as JSON.
func addToxic(link *toxiproxy.Proxy, kind, stream, attributes string) error {
	spec := fmt.Sprintf(`{"type": %q, "stream": %q, "attributes": %s}`, kind, stream, attributes)
	if _, err := link.Toxics.AddToxicJson(bytes.NewBufferString(spec)); err != nil {
		return fmt.Errorf("add the %s toxic %s: %w", stream, spec, err)
	}
	return nil
}

// parseRate reads a bandwidth such as 20Mbit into toxiproxy's unit, KB/s.
func parseRate(s string) (int64, error) {
	var value float64
	var unit string
	if s == "0" {
		return 0, nil
	}
	if _, err := fmt.Sscanf(s, "%g%s", &value, &unit); err != nil || value <= 0 {
		return 0, fmt.Errorf("-rate %q: want a bandwidth such as 20Mbit", s)
	}
	bits := map[string]float64{"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}[strings.ToLower(unit)]
	if bits == 0 {
		return 0, fmt.Errorf("-rate %q: the unit must be Kbit, Mbit or Gbit", s)
	}
	return int64(value * bits / 8 / 1000), nil
}

// requestKind names what a request is for: discovery, OpenAPI documents, Helm's release
// records, a dry run, a watch, or the verb and resource.
func requestKind(r *http.Request) string {
	q := r.URL.Query()
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case path == "/version" || path == "/api" || path == "/apis":
		return "discovery " + path
	case strings.HasPrefix(path, "/openapi/"):
		if q.Get("hash") != "" {
			return "openapi document"
		}
		return "openapi index"
	}
	resource, name, ok := resourceOf(path)
	if !ok {
		return r.Method + " " + path
	}
	if resource == "" {
		return "discovery group version"
	}
	verb := strings.ToLower(r.Method)
	switch {
	case q.Get("watch") == "true" || q.Get("watch") == "1":
		verb = "watch"
	case q.Get("dryRun") != "":
		verb = "dry-run " + verb
	case r.Method == http.MethodGet && name == "":
		verb = "list"
	}
	if resource == "secrets" && (strings.Contains(q.Get("labelSelector"), "owner=helm") || strings.HasPrefix(name, "sh.helm.release.")) {
		resource = "secrets (Helm's release records)"
	}
	return verb + " " + resource
}

// resourceOf splits a resource path (/api/v1/..., /apis/<group>/<version>/...) into its
// resource and object name; a group version's own path has neither.
func resourceOf(path string) (resource, name string, ok bool) {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		rest = parts[3:]
	default:
		return "", "", false
	}
	// namespaces/<name>/<resource>..., but not a namespace's own subresources.
	if len(rest) >= 3 && rest[0] == "namespaces" && rest[2] != "finalize" && rest[2] != "status" {
		rest = rest[2:]
	}
	if len(rest) == 0 {
		return "", "", true
	}
	resource = rest[0]
	if len(rest) > 1 {
		name = rest[1]
	}
	if len(rest) > 2 {
		resource += "/" + strings.Join(rest[2:], "/")
	}
	return resource, name, true
}

// counter holds the counts since the last reset.
type counter struct {
	mu       sync.Mutex
	requests map[string]int64
	bodies   map[string]int64
	wire     atomic.Int64
}

func newCounter() *counter {
	return &counter{requests: map[string]int64{}, bodies: map[string]int64{}}
}

func (c *counter) request(kind string) {
	c.mu.Lock()
	c.requests[kind]++
	c.mu.Unlock()
}

func (c *counter) body(kind string, n int64) {
	c.mu.Lock()
	c.bodies[kind] += n
	c.mu.Unlock()
}

func (c *counter) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/reset", func(w http.ResponseWriter, _ *http.Request) {
		c.mu.Lock()
		c.requests, c.bodies = map[string]int64{}, map[string]int64{}
		c.wire.Store(0)
		c.mu.Unlock()
	})
	mux.HandleFunc("/stats", func(w http.ResponseWriter, _ *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		kinds := make([]string, 0, len(c.requests))
		var total int64
		for kind, n := range c.requests {
			kinds = append(kinds, kind)
			total += n
		}
		sort.Slice(kinds, func(i, j int) bool {
			if c.requests[kinds[i]] != c.requests[kinds[j]] {
				return c.requests[kinds[i]] > c.requests[kinds[j]]
			}
			return kinds[i] < kinds[j]
		})
		fmt.Fprintf(w, "%d\t%d\n", total, c.wire.Load())
		for _, kind := range kinds {
			fmt.Fprintf(w, "%d\t%d\t%s\n", c.requests[kind], c.bodies[kind], kind)
		}
	})
	return mux
}

// countingBody counts the bytes of a response body as the clients read it.
type countingBody struct {
	io.ReadCloser
	kind   string
	counts *counter
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.counts.body(b.kind, int64(n))
	return n, err
}

// countingListener counts every byte written to the clients' connections: what they receive
// through the link, TLS and HTTP framing included.
type countingListener struct {
	net.Listener
	counts *counter
}

func (l *countingListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: conn, counts: l.counts}, nil
}

type countingConn struct {
	net.Conn
	counts *counter
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.counts.wire.Add(int64(n))
	return n, err
}
