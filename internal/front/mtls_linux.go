package front

import (
	"bufio"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"io"
	"math/big"
	"os"
	"strings"
	"time"
)

// Terraform and OpenTofu start a provider with automatic mTLS: PLUGIN_CLIENT_CERT holds their
// certificate, and the provider answers with a certificate of its own in its handshake line.
// go-plugin makes that certificate with a P-521 key, which takes about 13 ms of a front's start
// (the curve's table built, the key drawn, the certificate signed and checked) before the line,
// three times a plan. The front makes the same certificate (self-signed, for localhost, client
// and server use) with a P-256 key, which Go's TLS and x509 take as they take P-521, in well
// under a millisecond, and hands go-plugin the TLS configuration go-plugin would have built
// around it (Terraform's certificate required and checked, TLS 1.2 at least).

// clientCertVariable is where Terraform puts its certificate for automatic mTLS.
const clientCertVariable = "PLUGIN_CLIENT_CERT"

// autoMTLS returns the TLS configuration of the front's gRPC server for a client whose
// certificate is clientPEM, and the DER of the server's certificate for the handshake line.
func autoMTLS(clientPEM string) (*tls.Config, []byte, error) {
	clients := x509.NewCertPool()
	if !clients.AppendCertsFromPEM([]byte(clientPEM)) {
		return nil, nil, errors.New(clientCertVariable + " holds no PEM certificate")
	}
	cert, err := selfSigned(elliptic.P256())
	if err != nil {
		return nil, nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    clients,
		RootCAs:      clients,
		MinVersion:   tls.VersionTLS12,
		ServerName:   mtlsHost,
	}, cert.Certificate[0], nil
}

// mtlsHost is the name both ends of automatic mTLS use.
const mtlsHost = "localhost"

// selfSigned returns a certificate of a new key on curve, signed by that key, for mtlsHost, for
// client and server use: go-plugin's certificate for automatic mTLS.
func selfSigned(curve elliptic.Curve) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(curve, rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	template := &x509.Certificate{
		Subject:               pkix.Name{CommonName: mtlsHost},
		DNSNames:              []string{mtlsHost},
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment | x509.KeyUsageKeyAgreement | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		SerialNumber:          serial,
		NotBefore:             now.Add(-30 * time.Second),
		NotAfter:              now.Add(262980 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// warmClientCurve builds, on another core while the front starts, the table of the P-521 curve
// that checking Terraform's certificate (go-plugin's, P-521) in the TLS handshake needs.
func warmClientCurve() {
	go func() { _, _ = ecdh.P521().GenerateKey(rand.Reader) }()
}

// withServerCert returns go-plugin's handshake line (CORE|APP|NETWORK|ADDRESS|PROTOCOL|CERT, and a
// seventh field when the client multiplexes) with the certificate der in its sixth field, which
// go-plugin leaves empty when it is handed a TLS configuration. A line of another shape, or one
// that already carries a certificate, is returned as it is.
func withServerCert(line string, der []byte) string {
	body, newline := strings.CutSuffix(line, "\n")
	fields := strings.Split(body, "|")
	if len(fields) < 6 || fields[5] != "" {
		return line
	}
	fields[5] = base64.RawStdEncoding.EncodeToString(der)
	out := strings.Join(fields, "|")
	if newline {
		out += "\n"
	}
	return out
}

// certifyHandshake makes os.Stdout a pipe whose first line, go-plugin's handshake line, reaches
// out with the certificate der in it (withServerCert); what follows passes as it is. go-plugin
// replaces os.Stdout with a stream of its own once the line is written.
func certifyHandshake(out *os.File, der []byte) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	os.Stdout = w
	go func() {
		in := bufio.NewReader(r)
		line, err := in.ReadString('\n')
		if _, werr := io.WriteString(out, withServerCert(line, der)); werr != nil || err != nil {
			return
		}
		_, _ = io.Copy(out, in)
	}()
	return nil
}
