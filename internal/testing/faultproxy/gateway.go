package faultproxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testing/testca"
)

// Gateway is the HTTP layer of a tunnel such as the GitLab agent's: it ends the client's TLS
// with a certificate of its own, forwards each request to the API server over TLS of its own,
// answers 502 when that fails, and answers requests itself, without forwarding them, as its
// rules say. A client authenticated by a token passes through it unchanged.
type Gateway struct {
	server   *http.Server
	listener net.Listener
	caPEM    []byte

	mu        sync.Mutex
	rules     []*Rule
	answered  map[int]int
	forwarded int
	// requests are the requests received, "METHOD path?query", in order.
	requests []string
	holds    []*Hold
}

// Hold keeps the requests it selects from the API server until a request it is released by is
// under way: one that comes while they wait, or one that came before them and is not answered
// yet. Its time up, it lets them go (Gateway.Hold).
type Hold struct {
	g              *Gateway
	match, release func(*http.Request) bool
	wait           time.Duration

	// waiting are the channels of the held requests, closed by the next releasing request.
	waiting []chan struct{}
	// releasing is how many releasing requests are under way.
	releasing      int
	held, timedOut int
}

// Rule has the gateway answer a share of the requests it matches with a status of its own.
type Rule struct {
	// Match selects the requests the rule may answer; nil selects every request.
	Match func(*http.Request) bool
	// Share is the part of the selected requests answered, from 0 to 1, spread evenly: with
	// 0.3, three of every ten in a row.
	Share float64
	// Statuses are answered in turn.
	Statuses []int
	// RetryAfter, when not empty, is the Retry-After header of every answer.
	RetryAfter string
	// Times bounds how many requests the rule answers; 0 sets no bound.
	Times int

	selected, answered int
}

// answers says whether the rule answers req, and with which status.
func (r *Rule) answers(req *http.Request) (int, bool) {
	if (r.Match != nil && !r.Match(req)) || len(r.Statuses) == 0 || (r.Times > 0 && r.answered >= r.Times) {
		return 0, false
	}
	r.selected++
	if int(float64(r.selected)*r.Share) == int(float64(r.selected-1)*r.Share) {
		return 0, false
	}
	status := r.Statuses[r.answered%len(r.Statuses)]
	r.answered++
	return status, true
}

// StartGateway listens on a free loopback port and forwards to the API server of the current
// context of the kubeconfig at path, trusting it as the kubeconfig does. When via is not
// empty, connections to the API server are dialled to via instead (a Proxy's Addr), so that
// the proxy's TCP faults hit the gateway's upstream connections.
func StartGateway(kubeconfig, via string) (*Gateway, error) {
	upstream, trust, err := upstreamOf(kubeconfig)
	if err != nil {
		return nil, err
	}
	ca, err := testca.New("faultproxy gateway CA")
	if err != nil {
		return nil, err
	}
	serving, err := ca.Server("faultproxy gateway")
	if err != nil {
		return nil, err
	}
	listener, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{serving.TLS}, NextProtos: []string{"h2", "http/1.1"}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	g := &Gateway{listener: listener, caPEM: ca.CertPEM, answered: map[int]int{}}
	g.server = &http.Server{Handler: g.handler(upstream, trust, via), ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = g.server.Serve(listener) }()
	return g, nil
}

func (g *Gateway) handler(upstream *url.URL, trust *tls.Config, via string) http.Handler {
	transport := &http.Transport{TLSClientConfig: trust, ForceAttemptHTTP2: true, IdleConnTimeout: 90 * time.Second}
	if via != "" {
		dialer := &net.Dialer{Timeout: 10 * time.Second}
		transport.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, via)
		}
	}
	forward := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(upstream) },
		Transport:     transport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			g.count(http.StatusBadGateway)
			http.Error(w, "the gateway could not reach the API server: "+err.Error(), http.StatusBadGateway)
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		defer g.held(req)()
		if status, retryAfter, ok := g.decide(req); ok {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			http.Error(w, fmt.Sprintf("the gateway answered %d %s (fault injected)", status, http.StatusText(status)), status)
			return
		}
		forward.ServeHTTP(w, req)
	})
}

// held waits while a hold keeps req, and releases the requests held until req. The gateway
// calls done once it has answered req.
func (g *Gateway) held(req *http.Request) (done func()) {
	g.mu.Lock()
	var wait chan struct{}
	var hold *Hold
	var releases []*Hold
	for _, h := range g.holds {
		if h.release(req) {
			for _, c := range h.waiting {
				close(c)
			}
			h.waiting = nil
			h.releasing++
			releases = append(releases, h)
		}
		if hold == nil && h.match(req) {
			hold = h
			h.held++
			if h.releasing == 0 {
				wait = make(chan struct{})
				h.waiting = append(h.waiting, wait)
			}
		}
	}
	g.mu.Unlock()
	done = func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, h := range releases {
			h.releasing--
		}
	}
	if wait == nil {
		return done
	}
	timer := time.NewTimer(hold.wait)
	defer timer.Stop()
	select {
	case <-wait:
	case <-timer.C:
		g.mu.Lock()
		hold.timedOut++
		hold.waiting = slices.DeleteFunc(hold.waiting, func(c chan struct{}) bool { return c == wait })
		g.mu.Unlock()
	}
	return done
}

// Hold keeps each request match selects from the API server until a request release selects
// is under way (come after it, or come before it and not answered yet), or for wait at most:
// it shows whether a client sends the second without waiting for the answer to the first.
func (g *Gateway) Hold(match, release func(*http.Request) bool, wait time.Duration) *Hold {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := &Hold{g: g, match: match, release: release, wait: wait}
	g.holds = append(g.holds, h)
	return h
}

// Counts are how many requests the hold kept, and how many of them it kept until its time was
// up, no releasing request having come after them.
func (h *Hold) Counts() (held, timedOut int) {
	h.g.mu.Lock()
	defer h.g.mu.Unlock()
	return h.held, h.timedOut
}

func (g *Gateway) decide(req *http.Request) (int, string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests = append(g.requests, req.Method+" "+req.URL.RequestURI())
	for _, rule := range g.rules {
		if status, ok := rule.answers(req); ok {
			g.answered[status]++
			return status, rule.RetryAfter, true
		}
	}
	g.forwarded++
	return 0, "", false
}

func (g *Gateway) count(status int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.answered[status]++
	g.forwarded--
}

// Answer replaces the gateway's rules; the first rule that answers a request answers it.
// Answer() with no rule forwards everything.
func (g *Gateway) Answer(rules ...*Rule) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.rules = rules
}

// Answered is how many requests the gateway answered itself, by status: those its rules
// answered and the 502s of upstream failures.
func (g *Gateway) Answered() map[int]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[int]int, len(g.answered))
	for status, n := range g.answered {
		out[status] = n
	}
	return out
}

// Forwarded is how many requests reached the API server.
func (g *Gateway) Forwarded() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.forwarded
}

// Requests returns the requests received since the last call, "METHOD path?query" each, in
// the order they came, and forgets them.
func (g *Gateway) Requests() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.requests
	g.requests = nil
	return out
}

// URL is the address clients connect to.
func (g *Gateway) URL() string { return "https://" + g.listener.Addr().String() }

// Close stops the gateway and closes its connections.
func (g *Gateway) Close() { _ = g.server.Close() }

// Kubeconfig writes to out a copy of the kubeconfig at in whose every cluster is reached
// through the gateway, trusting the gateway's certificate authority.
func (g *Gateway) Kubeconfig(in, out string) error {
	config, err := clientcmd.LoadFromFile(in)
	if err != nil {
		return fmt.Errorf("read kubeconfig %s: %w", in, err)
	}
	for _, cluster := range config.Clusters {
		cluster.Server = g.URL()
		cluster.CertificateAuthority = ""
		cluster.CertificateAuthorityData = g.caPEM
		cluster.TLSServerName = ""
		cluster.InsecureSkipTLSVerify = false
	}
	if err := clientcmd.WriteToFile(*config, out); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", out, err)
	}
	return nil
}

// upstreamOf returns the URL of the current context's API server and the TLS configuration
// that trusts it as the kubeconfig does.
func upstreamOf(kubeconfig string) (*url.URL, *tls.Config, error) {
	restConfig, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("read kubeconfig %s: %w", kubeconfig, err)
	}
	upstream, err := url.Parse(restConfig.Host)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig %s: server %q: %w", kubeconfig, restConfig.Host, err)
	}
	trust, err := rest.TLSConfigFor(restConfig)
	if err != nil || trust == nil {
		return nil, nil, errors.Join(fmt.Errorf("kubeconfig %s: no TLS configuration for %s", kubeconfig, restConfig.Host), err)
	}
	if trust.ServerName == "" {
		trust.ServerName = upstream.Hostname()
	}
	return upstream, trust, nil
}
