package chartserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCA is a certificate authority made for one test: it signs the
// certificates of the servers started WithTLS and the client certificates
// they require WithClientCertificates.
type TestCA struct {
	// CertFile is the CA's certificate, PEM, what a client is given to trust
	// the servers.
	CertFile string

	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	dir  string
}

// NewTestCA makes a CA valid for a day; its files go under the test's
// temporary directory.
func NewTestCA(t testing.TB) *TestCA {
	t.Helper()
	key := newKey(t)
	template := &x509.Certificate{
		SerialNumber:          serialNumber(t),
		Subject:               pkix.Name{CommonName: "chartserver test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("create test CA: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("parse test CA: %v", err)
	}
	ca := &TestCA{cert: cert, key: key, dir: t.TempDir()}
	ca.CertFile = ca.write(t, "ca.pem", "CERTIFICATE", der)
	return ca
}

// ServerCertificate issues a serving certificate for localhost,
// 127.0.0.1 and ::1.
func (ca *TestCA) ServerCertificate(t testing.TB) tls.Certificate {
	t.Helper()
	template := ca.leaf(t, "chartserver")
	template.DNSNames = []string{"localhost"}
	template.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	template.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	der, key := ca.issue(t, template)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// ClientCertificate issues a client certificate and writes it and its key as
// PEM files, returning their paths.
func (ca *TestCA) ClientCertificate(t testing.TB, name string) (certFile, keyFile string) {
	t.Helper()
	template := ca.leaf(t, name)
	template.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	der, key := ca.issue(t, template)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatalf("marshal client key: %v", err)
	}
	return ca.write(t, name+".pem", "CERTIFICATE", der), ca.write(t, name+"-key.pem", "PRIVATE KEY", keyDER)
}

// Pool is a certificate pool holding only the CA.
func (ca *TestCA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return pool
}

func (ca *TestCA) leaf(t testing.TB, commonName string) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: serialNumber(t),
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
}

func (ca *TestCA) issue(t testing.TB, template *x509.Certificate) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key := newKey(t)
	der, err := x509.CreateCertificate(rand.Reader, template, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatalf("issue certificate %s: %v", template.Subject.CommonName, err)
	}
	return der, key
}

func (ca *TestCA) write(t testing.TB, name, blockType string, der []byte) string {
	t.Helper()
	path := filepath.Join(ca.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
	return path
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("generate key: %v", err)
	}
	return key
}

func serialNumber(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		t.Fatalf("serial number: %v", err)
	}
	return n
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
