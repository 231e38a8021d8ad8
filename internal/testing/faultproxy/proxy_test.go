package faultproxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// upstream answers /slow after release is closed and everything else at once.
func upstream(t *testing.T) (addr string, release chan struct{}) {
	t.Helper()
	release = make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	return strings.TrimPrefix(srv.URL, "http://"), release
}

func startProxy(t *testing.T, up string) *Proxy {
	t.Helper()
	p, err := Start(up)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func get(client *http.Client, addr, path string) (string, error) {
	resp, err := client.Get("http://" + addr + path)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

func TestProxy_forwards(t *testing.T) {
	up, _ := upstream(t)
	p := startProxy(t, up)
	body, err := get(http.DefaultClient, p.Addr(), "/")
	if err != nil || body != "ok" {
		t.Fatalf("got %q, %v; want ok", body, err)
	}
}

func TestProxy_resetAllBreaksOpenConnectionsAndKeepsListening(t *testing.T) {
	up, _ := upstream(t)
	p := startProxy(t, up)
	client := &http.Client{Transport: &http.Transport{}}
	resp, err := client.Get("http://" + p.Addr() + "/slow")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	addr := p.Addr()
	if err := p.ResetAll(); err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() { _, err := io.ReadAll(resp.Body); read <- err }()
	select {
	case err := <-read:
		if err == nil {
			t.Fatal("reading a response across a reset succeeded; want the connection broken")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a response held open across a reset is still open after 5s; want the connection broken")
	}
	if p.Addr() != addr {
		t.Fatalf("proxy moved from %s to %s", addr, p.Addr())
	}
	if body, err := get(client, p.Addr(), "/"); err != nil || body != "ok" {
		t.Fatalf("after reset got %q, %v; want ok", body, err)
	}
	if p.Resets() != 1 {
		t.Fatalf("Resets() = %d, want 1", p.Resets())
	}
}

func TestProxy_stallHoldsDataUntilItEnds(t *testing.T) {
	up, _ := upstream(t)
	p := startProxy(t, up)
	stalled := make(chan error, 1)
	go func() { stalled <- p.Stall(context.Background(), 600*time.Millisecond) }()
	time.Sleep(50 * time.Millisecond) // let the stall begin
	start := time.Now()
	body, err := get(&http.Client{Transport: &http.Transport{}}, p.Addr(), "/")
	if err != nil || body != "ok" {
		t.Fatalf("got %q, %v; want ok once the stall ends", body, err)
	}
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Fatalf("request took %s during a 600ms stall; want it held", took)
	}
	if err := <-stalled; err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if _, err := get(&http.Client{Transport: &http.Transport{}}, p.Addr(), "/"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 300*time.Millisecond {
		t.Fatalf("request after the stall took %s; want no delay", took)
	}
}

func TestProxy_delayHoldsEveryRoundTrip(t *testing.T) {
	up, _ := upstream(t)
	p := startProxy(t, up)
	client := &http.Client{Transport: &http.Transport{}}
	if _, err := get(client, p.Addr(), "/"); err != nil {
		t.Fatal(err)
	}
	if err := p.Delay(150 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		start := time.Now()
		body, err := get(client, p.Addr(), "/")
		if err != nil || body != "ok" {
			t.Fatalf("got %q, %v; want ok", body, err)
		}
		if took := time.Since(start); took < 300*time.Millisecond {
			t.Fatalf("a round trip took %s behind a 150ms delay each way; want at least 300ms", took)
		}
	}
}

func TestProxy_resetEveryRunsOnSchedule(t *testing.T) {
	up, _ := upstream(t)
	p := startProxy(t, up)
	stop := p.ResetEvery(context.Background(), 100*time.Millisecond)
	time.Sleep(550 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil { // again, as a test's cleanup does
		t.Fatal(err)
	}
	n := p.Resets()
	if n < 3 || n > 6 {
		t.Fatalf("Resets() = %d after 550ms at 100ms; want about 5", n)
	}
	time.Sleep(250 * time.Millisecond)
	if p.Resets() != n {
		t.Fatalf("resets went on after stop: %d then %d", n, p.Resets())
	}
}

func TestProxy_kubeconfigPointsAtProxyAndKeepsServerName(t *testing.T) {
	up, _ := upstream(t)
	p := startProxy(t, up)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	config := clientcmdapi.NewConfig()
	config.Clusters["local"] = &clientcmdapi.Cluster{Server: "https://" + up}
	config.Contexts["admin"] = &clientcmdapi.Context{Cluster: "local"}
	config.CurrentContext = "admin"
	if err := clientcmd.WriteToFile(*config, in); err != nil {
		t.Fatal(err)
	}
	if got, err := UpstreamOf(in); err != nil || got != up {
		t.Fatalf("UpstreamOf = %q, %v; want %s", got, err, up)
	}
	if err := p.Kubeconfig(in, out); err != nil {
		t.Fatal(err)
	}
	written, err := clientcmd.LoadFromFile(out)
	if err != nil {
		t.Fatal(err)
	}
	cluster := written.Clusters["local"]
	if cluster.Server != "https://"+p.Addr() || cluster.TLSServerName != "127.0.0.1" {
		t.Fatalf("cluster = %s (server name %q); want https://%s (127.0.0.1)", cluster.Server, cluster.TLSServerName, p.Addr())
	}
}
