package kube

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// tlsServer is an API server over TLS, over HTTP/2 when h2, whose handshakes take 50 ms, so
// that requests sent together are all under way before the first connection is up. conns
// counts the connections it accepted. answer answers every request.
func tlsServer(t *testing.T, h2 bool, answer http.HandlerFunc) (hs *httptest.Server, conns *atomic.Int32) {
	t.Helper()
	conns = &atomic.Int32{}
	hs = httptest.NewUnstartedServer(answer)
	hs.EnableHTTP2 = h2
	hs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	hs.StartTLS()
	hs.TLS.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		time.Sleep(50 * time.Millisecond)
		return nil, nil
	}
	t.Cleanup(hs.Close)
	return hs, conns
}

func namespaceAnswer(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/version":
		_, _ = w.Write([]byte(versionAnswer))
	default:
		if name, ok := strings.CutPrefix(r.URL.Path, "/api/v1/namespaces/"); ok {
			_, _ = fmt.Fprintf(w, `{"kind":"Namespace","apiVersion":"v1","metadata":{"name":%q}}`, name)
			return true
		}
		return discoveryAnswers(w, r)
	}
	return true
}

// readTogether reads n namespaces at once through conn's early clients, as a refresh does
// while the probe and discovery are under way, and waits for the probe.
func readTogether(t *testing.T, hs *httptest.Server, n int) {
	t.Helper()
	conn := NewConnection(Options{Host: hs.URL, InCluster: noInCluster,
		ClusterCACertificate: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hs.Certificate().Raw}))})
	clients, wait, err := conn.Early(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("review-%d", i)
			ns, err := clients.Kubernetes.CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{})
			if err != nil || ns.Name != name {
				t.Errorf("read %s = %v, %v", name, ns, err)
			}
		}()
	}
	wg.Wait()
	if err := wait(context.Background()); err != nil {
		t.Fatalf("wait = %v", err)
	}
}

// Over HTTP/2, the probe, discovery and eight reads sent together take one connection, one TLS
// handshake, where each would have dialed its own.
func TestConnection_firstRequestsTogetherShareOneHandshake(t *testing.T) {
	hs, conns := tlsServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		if !namespaceAnswer(w, r) {
			http.NotFound(w, r)
		}
	})
	readTogether(t, hs, 8)
	if n := conns.Load(); n != 1 {
		t.Errorf("the API server accepted %d connections; want 1", n)
	}
}

// Over HTTP/1.1, where a connection carries one request at a time, requests held back until
// the first has its connection then dial their own: the server sees four reads at once.
func TestConnection_overHTTP1TheFirstRequestsStillGoTogether(t *testing.T) {
	const together = 4
	var (
		mu      sync.Mutex
		inside  int
		all     = make(chan struct{})
		reached atomic.Bool
	)
	hs, conns := tlsServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		if _, ok := strings.CutPrefix(r.URL.Path, "/api/v1/namespaces/"); ok {
			mu.Lock()
			inside++
			if inside == together {
				reached.Store(true)
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
			case <-time.After(3 * time.Second):
			}
		}
		if !namespaceAnswer(w, r) {
			http.NotFound(w, r)
		}
	})
	readTogether(t, hs, together)
	if !reached.Load() {
		t.Errorf("the API server never held %d reads at once: the requests went one by one", together)
	}
	if n := conns.Load(); n < together {
		t.Errorf("the API server accepted %d connections; want at least %d over HTTP/1.1", n, together)
	}
}
