package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testing/testca"
)

func TestRequestKind(t *testing.T) {
	for _, tc := range []struct{ method, target, want string }{
		{"GET", "/version", "discovery /version"},
		{"GET", "/apis", "discovery /apis"},
		{"GET", "/apis/apps/v1", "discovery group version"},
		{"GET", "/openapi/v3", "openapi index"},
		{"GET", "/openapi/v3/apis/apps/v1?hash=ABC", "openapi document"},
		{"GET", "/api/v1/namespaces/n/secrets?labelSelector=name%3Dbench%2Cowner%3Dhelm", "list secrets (Helm's release records)"},
		{"GET", "/api/v1/namespaces/n/secrets/sh.helm.release.v1.bench.v2", "get secrets (Helm's release records)"},
		{"GET", "/api/v1/namespaces/n/secrets/other", "get secrets"},
		{"PATCH", "/apis/apps/v1/namespaces/n/deployments/web?dryRun=All&fieldManager=gitlabk8s-helm", "dry-run patch deployments"},
		{"GET", "/api/v1/namespaces/n/pods?watch=true", "watch pods"},
		{"GET", "/api/v1/namespaces/n/configmaps", "list configmaps"},
		{"GET", "/api/v1/namespaces/n", "get namespaces"},
		{"GET", "/api/v1/namespaces", "list namespaces"},
		{"PUT", "/api/v1/namespaces/n/finalize", "put namespaces/finalize"},
		{"GET", "/healthz", "GET /healthz"},
	} {
		if got := requestKind(httptest.NewRequest(tc.method, tc.target, nil)); got != tc.want {
			t.Errorf("requestKind(%s %s) = %q, want %q", tc.method, tc.target, got, tc.want)
		}
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]int64{"20Mbit": 2500, "1Gbit": 125000, "800Kbit": 100, "0": 0} {
		if got, err := parseRate(in); err != nil || got != want {
			t.Errorf("parseRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"20MB", "fast", "-1Mbit"} {
		if _, err := parseRate(in); err == nil {
			t.Errorf("parseRate(%q) succeeded, want an error", in)
		}
	}
}

// writeCertificate writes a serving certificate for 127.0.0.1 of a new CA, and its key, into
// dir; it returns their files, the CA's file and the certificate.
func writeCertificate(t *testing.T, dir string) (certFile, keyFile, caFile string, cert tls.Certificate) {
	t.Helper()
	ca, err := testca.New("kube-apiserver CA")
	if err != nil {
		t.Fatal(err)
	}
	issued, err := ca.Server("kube-apiserver")
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, caFile = filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key"), filepath.Join(dir, "ca.crt")
	for file, data := range map[string][]byte{certFile: issued.CertPEM, keyFile: issued.KeyPEM, caFile: ca.CertPEM} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return certFile, keyFile, caFile, issued.TLS
}

func TestTunnel_delaysLimitsAndCounts(t *testing.T) {
	certFile, keyFile, caFile, cert := writeCertificate(t, t.TempDir())
	body := strings.Repeat("x", 100_000)
	upstream := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer secret" {
			http.Error(w, "no credentials passed on", http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, body)
	}))
	upstream.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	upstream.StartTLS()
	defer upstream.Close()

	tun, err := start(config{
		listen: "127.0.0.1:0", upstream: upstream.URL, caFile: caFile, certFile: certFile, keyFile: keyFile,
		control: "127.0.0.1:0", latency: 200 * time.Millisecond, rate: "4Mbit",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tun.close() }()

	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	req, _ := http.NewRequest(http.MethodGet, "https://"+tun.listen+"/api/v1/namespaces/n/configmaps", nil)
	req.Header.Set("Authorization", "Bearer secret")
	began := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	elapsed := time.Since(began)
	if resp.StatusCode != http.StatusOK || len(got) != len(body) {
		t.Fatalf("through the tunnel: %s, %d bytes; want 200 and %d bytes", resp.Status, len(got), len(body))
	}
	// At least the TLS handshake's and the request's round trips, and 100 kB at 500 kB/s.
	if elapsed < 600*time.Millisecond {
		t.Errorf("the request took %s; the link's delay and bandwidth limit would make it at least 600ms", elapsed)
	}

	stats := get(t, "http://"+tun.control+"/stats")
	lines := strings.Split(strings.TrimSpace(stats), "\n")
	var requests, wire int
	if _, err := fmt.Sscanf(lines[0], "%d\t%d", &requests, &wire); err != nil || requests != 1 || wire < len(body) {
		t.Errorf("stats total %q: want 1 request and at least %d bytes received", lines[0], len(body))
	}
	if len(lines) != 2 || lines[1] != "1\t100000\tlist configmaps" {
		t.Errorf("stats by kind = %q, want one list of configmaps of 100000 bytes", lines[1:])
	}
	get(t, "http://"+tun.control+"/reset")
	if stats := get(t, "http://"+tun.control+"/stats"); stats != "0\t0\n" {
		t.Errorf("stats after a reset = %q, want none", stats)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
