package testca

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A server with the CA's server certificate, requiring a client certificate of the same CA,
// answers a client that trusts the CA's PEM and presents its client certificate, and refuses
// one of another CA.
func TestCA_serverAndClientCertificatesVerify(t *testing.T) {
	ca, err := New("test CA")
	if err != nil {
		t.Fatal(err)
	}
	server, err := ca.Server("server")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{server.TLS}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	defer srv.Close()

	trust := x509.NewCertPool()
	if !trust.AppendCertsFromPEM(ca.CertPEM) {
		t.Fatal("CertPEM holds no certificate")
	}
	get := func(client *Issued) (string, error) {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: trust, Certificates: []tls.Certificate{client.TLS}, MinVersion: tls.VersionTLS12}}}
		resp, err := c.Get(srv.URL)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return string(body), err
	}
	deployer, err := ca.Client("deployer")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := get(deployer); err != nil || got != "deployer" {
		t.Fatalf("GET with the CA's client certificate = %q, %v; want deployer", got, err)
	}
	other, err := New("other CA")
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := other.Client("stranger")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := get(stranger); err == nil {
		t.Fatal("GET with another CA's client certificate succeeded")
	}
	if block, _ := pem.Decode(deployer.KeyPEM); block == nil || block.Type != "PRIVATE KEY" {
		t.Fatalf("KeyPEM is not a PKCS #8 key: %q", deployer.KeyPEM)
	}
}
