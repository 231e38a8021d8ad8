// Package testca makes certificate authorities for tests and the certificates they issue:
// servers on loopback (the chart repositories of internal/chartserver, the fault proxy's
// gateway, the benchmark's tunnel) and clients. It takes no testing.TB, so code that is not a
// test file can use it too. Production code never imports it.
package testca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// validity is how long a certificate is valid, from an hour before it was made, so that a
// clock a little behind ours still accepts it.
const validity = 24 * time.Hour

// CA is a certificate authority made for one test or one process.
type CA struct {
	// CertPEM is the CA's certificate, what a client is given to trust the servers.
	CertPEM []byte

	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// Issued is a certificate the CA issued, with its key, as PEM and ready for a tls.Config.
type Issued struct {
	CertPEM, KeyPEM []byte
	TLS             tls.Certificate
}

// New makes a CA valid for a day, named commonName.
func New(commonName string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("test CA key: %w", err)
	}
	template, err := certificate(commonName)
	if err != nil {
		return nil, err
	}
	template.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	template.BasicConstraintsValid = true
	template.IsCA = true
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("test CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("test CA certificate: %w", err)
	}
	return &CA{CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), cert: cert, key: key}, nil
}

// Server issues a serving certificate for localhost, 127.0.0.1 and ::1.
func (ca *CA) Server(commonName string) (*Issued, error) {
	template, err := certificate(commonName)
	if err != nil {
		return nil, err
	}
	template.DNSNames = []string{"localhost"}
	template.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	template.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	return ca.issue(template)
}

// Client issues a client certificate for the user commonName.
func (ca *CA) Client(commonName string) (*Issued, error) {
	template, err := certificate(commonName)
	if err != nil {
		return nil, err
	}
	template.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return ca.issue(template)
}

// Pool is a certificate pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return pool
}

func (ca *CA) issue(template *x509.Certificate) (*Issued, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("key of %s: %w", template.Subject.CommonName, err)
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("issue certificate %s: %w", template.Subject.CommonName, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("key of %s: %w", template.Subject.CommonName, err)
	}
	issued := &Issued{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
	if issued.TLS, err = tls.X509KeyPair(issued.CertPEM, issued.KeyPEM); err != nil {
		return nil, fmt.Errorf("certificate %s: %w", template.Subject.CommonName, err)
	}
	return issued, nil
}

// certificate is the template every certificate starts from: a random serial number and a
// day's validity.
func certificate(commonName string) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("serial number: %w", err)
	}
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}, nil
}
