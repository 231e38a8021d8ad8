package faultproxy

import (
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// tlsUpstream is an API server stand-in over TLS that answers every request with its path,
// and a kubeconfig that trusts it.
func tlsUpstream(t *testing.T) (kubeconfig string, srv *httptest.Server) {
	t.Helper()
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0ken" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/api/v1/slow/") {
			time.Sleep(time.Second)
		}
		_, _ = io.WriteString(w, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	config := clientcmdapi.NewConfig()
	config.Clusters["c"] = &clientcmdapi.Cluster{Server: srv.URL, CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}
	config.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t0ken"}
	config.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	config.CurrentContext = "x"
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*config, kubeconfig); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, srv
}

// gatewayClient starts a gateway to the upstream of kubeconfig and returns it with an HTTP
// client configured by the kubeconfig the gateway writes.
func gatewayClient(t *testing.T, kubeconfig, via string) (*Gateway, *http.Client, string) {
	t.Helper()
	g, err := StartGateway(kubeconfig, via)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	through := filepath.Join(t.TempDir(), "through")
	if err := g.Kubeconfig(kubeconfig, through); err != nil {
		t.Fatal(err)
	}
	restConfig, err := clientcmd.BuildConfigFromFlags("", through)
	if err != nil {
		t.Fatal(err)
	}
	client, err := rest.HTTPClientFor(restConfig)
	if err != nil {
		t.Fatal(err)
	}
	return g, client, restConfig.Host
}

func status(t *testing.T, client *http.Client, url string) (int, string, string) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(body)
}

func TestGateway_forwardsWithTheClientsToken(t *testing.T) {
	kubeconfig, _ := tlsUpstream(t)
	g, client, host := gatewayClient(t, kubeconfig, "")
	code, _, body := status(t, client, host+"/api/v1/namespaces")
	if code != http.StatusOK || body != "/api/v1/namespaces" {
		t.Fatalf("through the gateway: %d %q, want 200 with the path", code, body)
	}
	if g.Forwarded() != 1 || len(g.Answered()) != 0 {
		t.Fatalf("forwarded %d, answered %v; want 1 and none", g.Forwarded(), g.Answered())
	}
}

func TestGateway_answersItsShareInTurn(t *testing.T) {
	kubeconfig, _ := tlsUpstream(t)
	g, client, host := gatewayClient(t, kubeconfig, "")
	g.Answer(&Rule{Share: 0.3, Statuses: []int{http.StatusServiceUnavailable, http.StatusTooManyRequests}, RetryAfter: "1"})
	var got []int
	for range 10 {
		code, retryAfter, _ := status(t, client, host+"/api")
		if code != http.StatusOK && retryAfter != "1" {
			t.Fatalf("answer %d without Retry-After 1 (%q)", code, retryAfter)
		}
		got = append(got, code)
	}
	want := []int{200, 200, 200, 503, 200, 200, 429, 200, 200, 503}
	if !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	if g.Forwarded() != 7 || g.Answered()[503] != 2 || g.Answered()[429] != 1 {
		t.Fatalf("forwarded %d, answered %v; want 7, 503×2 and 429×1", g.Forwarded(), g.Answered())
	}
}

func TestGateway_ruleMatchesAndStopsAfterTimes(t *testing.T) {
	kubeconfig, _ := tlsUpstream(t)
	g, client, host := gatewayClient(t, kubeconfig, "")
	g.Answer(&Rule{Match: func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/b") }, Share: 1, Statuses: []int{http.StatusInternalServerError}, Times: 1})
	for _, tc := range []struct {
		path string
		want int
	}{{"/a", 200}, {"/b", 500}, {"/b", 200}, {"/a", 200}} {
		if code, _, _ := status(t, client, host+tc.path); code != tc.want {
			t.Fatalf("GET %s = %d, want %d", tc.path, code, tc.want)
		}
	}
	g.Answer()
	if code, _, _ := status(t, client, host+"/b"); code != 200 {
		t.Fatalf("with no rule GET /b = %d, want 200", code)
	}
}

func TestGateway_answers502WhenTheUpstreamFails(t *testing.T) {
	kubeconfig, srv := tlsUpstream(t)
	up := strings.TrimPrefix(srv.URL, "https://")
	p := startProxy(t, up)
	g, client, host := gatewayClient(t, kubeconfig, p.Addr())
	if code, _, body := status(t, client, host+"/via"); code != 200 || body != "/via" {
		t.Fatalf("through gateway and proxy: %d %q", code, body)
	}
	p.Close()
	if code, _, _ := status(t, client, host+"/via"); code != http.StatusBadGateway {
		t.Fatalf("with the proxy down: %d, want 502", code)
	}
	if g.Answered()[http.StatusBadGateway] != 1 {
		t.Fatalf("answered %v, want one 502", g.Answered())
	}
}

func TestGateway_holdKeepsARequestUntilOneAfterIt(t *testing.T) {
	kubeconfig, _ := tlsUpstream(t)
	g, client, host := gatewayClient(t, kubeconfig, "")
	path := func(p string) func(*http.Request) bool {
		return func(r *http.Request) bool { return r.URL.Path == p }
	}
	hold := g.Hold(path("/api/v1/held"), path("/api/v1/release"), time.Minute)
	if code, _, _ := status(t, client, host+"/api/v1/release"); code != http.StatusOK {
		t.Fatalf("releasing request: %d", code)
	}
	answered := make(chan string, 1)
	go func() {
		resp, err := client.Get(host + "/api/v1/held")
		if err != nil {
			answered <- err.Error()
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		answered <- string(body)
	}()
	select {
	case got := <-answered:
		t.Fatalf("the held request was answered (%q) though the only releasing request came before it", got)
	case <-time.After(300 * time.Millisecond):
	}
	status(t, client, host+"/api/v1/release")
	select {
	case got := <-answered:
		if got != "/api/v1/held" {
			t.Fatalf("held request answered %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the held request was not released by the request after it")
	}
	if held, timedOut := hold.Counts(); held != 1 || timedOut != 0 {
		t.Fatalf("held %d, timed out %d; want 1 and 0", held, timedOut)
	}

	// A releasing request that came first and is not answered yet lets the held one go.
	early := g.Hold(path("/api/v1/after"), path("/api/v1/slow/release"), time.Minute)
	slow := make(chan error, 1)
	go func() {
		resp, err := client.Get(host + "/api/v1/slow/release")
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		slow <- err
	}()
	time.Sleep(300 * time.Millisecond)
	if code, _, body := status(t, client, host+"/api/v1/after"); code != http.StatusOK || body != "/api/v1/after" {
		t.Fatalf("request after an unanswered releasing one: %d %q", code, body)
	}
	if held, timedOut := early.Counts(); held != 1 || timedOut != 0 {
		t.Fatalf("held %d, timed out %d; want 1 and 0", held, timedOut)
	}
	if err := <-slow; err != nil {
		t.Fatal(err)
	}

	short := g.Hold(path("/api/v1/alone"), path("/api/v1/never"), 50*time.Millisecond)
	if code, _, body := status(t, client, host+"/api/v1/alone"); code != http.StatusOK || body != "/api/v1/alone" {
		t.Fatalf("request held until its time was up: %d %q", code, body)
	}
	if held, timedOut := short.Counts(); held != 1 || timedOut != 1 {
		t.Fatalf("held %d, timed out %d; want 1 and 1", held, timedOut)
	}
}
