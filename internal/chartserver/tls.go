package chartserver

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testing/testca"
)

// TestCA is a certificate authority made for one test: it signs the
// certificates of the servers started WithTLS and the client certificates
// they require WithClientCertificates.
type TestCA struct {
	// CertFile is the CA's certificate, PEM, what a client is given to trust
	// the servers.
	CertFile string

	ca  *testca.CA
	dir string
}

// NewTestCA makes a CA valid for a day; its files go under the test's
// temporary directory.
func NewTestCA(t testing.TB) *TestCA {
	t.Helper()
	ca, err := testca.New("chartserver test CA")
	if err != nil {
		t.Fatal(err)
	}
	c := &TestCA{ca: ca, dir: t.TempDir()}
	c.CertFile = c.write(t, "ca.pem", ca.CertPEM)
	return c
}

// ServerCertificate issues a serving certificate for localhost,
// 127.0.0.1 and ::1.
func (c *TestCA) ServerCertificate(t testing.TB) tls.Certificate {
	t.Helper()
	issued, err := c.ca.Server("chartserver")
	if err != nil {
		t.Fatal(err)
	}
	return issued.TLS
}

// ClientCertificate issues a client certificate and writes it and its key as
// PEM files, returning their paths.
func (c *TestCA) ClientCertificate(t testing.TB, name string) (certFile, keyFile string) {
	t.Helper()
	issued, err := c.ca.Client(name)
	if err != nil {
		t.Fatal(err)
	}
	return c.write(t, name+".pem", issued.CertPEM), c.write(t, name+"-key.pem", issued.KeyPEM)
}

// Pool is a certificate pool holding only the CA.
func (c *TestCA) Pool() *x509.CertPool { return c.ca.Pool() }

func (c *TestCA) write(t testing.TB, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(c.dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
	return path
}

// start starts server over plain HTTP, or over TLS with a certificate of a
// new test CA when o asks for it (requiring client certificates of that CA
// too, if asked), and returns the CA (nil for plain HTTP).
func start(t testing.TB, o options, server *httptest.Server) *TestCA {
	t.Helper()
	if !o.tls {
		server.Start()
		return nil
	}
	ca := NewTestCA(t)
	// Refused handshakes are what the tests ask for, not news.
	server.Config.ErrorLog = log.New(io.Discard, "", 0)
	server.TLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{ca.ServerCertificate(t)}}
	if o.clientCertificates {
		server.TLS.ClientAuth = tls.RequireAndVerifyClientCert
		server.TLS.ClientCAs = ca.Pool()
	}
	server.StartTLS()
	return ca
}
