package chart

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// TLS says how to reach a chart repository or an OCI registry over HTTPS.
// The zero value trusts the system's certificate authorities.
type TLS struct {
	// CAFile is a PEM bundle of certificate authorities trusted in addition
	// to the system's, for a repository whose certificate a private CA
	// signed.
	CAFile string
	// CertFile and KeyFile are a PEM client certificate and its key, for a
	// repository that requires one; both or neither.
	CertFile, KeyFile string
	// InsecureSkipVerify accepts any server certificate, like helm's
	// --insecure-skip-tls-verify.
	InsecureSkipVerify bool
}

// TLSFile names one of the files of a TLS configuration.
type TLSFile string

// The files of a TLS configuration.
const (
	TLSFileCA   TLSFile = "CA bundle"
	TLSFileCert TLSFile = "client certificate"
	TLSFileKey  TLSFile = "client key"
)

// TLSFileError is a file of a TLS configuration that cannot be used.
type TLSFileError struct {
	File TLSFile
	Path string
	Err  error
}

func (e *TLSFileError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s %q: %v", e.File, e.Path, e.Err)
}

func (e *TLSFileError) Unwrap() error { return e.Err }

// ClientConfig builds the client TLS configuration t describes, reading its
// files. Errors are *TLSFileError.
func (t TLS) ClientConfig() (*tls.Config, error) {
	config := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.InsecureSkipVerify} //nolint:gosec // the user's choice, like helm --insecure-skip-tls-verify
	if t.CAFile != "" {
		pool, err := ReadCABundle(t.CAFile)
		if err != nil {
			return nil, err
		}
		config.RootCAs = pool
	}
	if t.CertFile != "" || t.KeyFile != "" {
		cert, err := ReadClientCertificate(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, err
		}
		config.Certificates = []tls.Certificate{cert}
	}
	return config, nil
}

// ReadCABundle reads a PEM file of one or more CA certificates and returns
// the system's pool with them added (only them where the system has none).
func ReadCABundle(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &TLSFileError{File: TLSFileCA, Path: path, Err: err}
	}
	certs, err := parseCertificates(data)
	if err != nil {
		return nil, &TLSFileError{File: TLSFileCA, Path: path, Err: err}
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	for _, cert := range certs {
		pool.AddCert(cert)
	}
	return pool, nil
}

// parseCertificates returns the certificates of a PEM bundle: at least one,
// and nothing but certificates.
func parseCertificates(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("holds a PEM block of type %q; only CERTIFICATE blocks belong in a CA bundle", block.Type)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", len(certs)+1, err)
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, errors.New("holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
	}
	return certs, nil
}

// ReadClientCertificate reads a PEM client certificate and its private key.
func ReadClientCertificate(certFile, keyFile string) (tls.Certificate, error) {
	switch {
	case certFile == "":
		return tls.Certificate{}, &TLSFileError{File: TLSFileCert, Path: certFile, Err: errors.New("is not set, but a client key is")}
	case keyFile == "":
		return tls.Certificate{}, &TLSFileError{File: TLSFileKey, Path: keyFile, Err: errors.New("is not set, but a client certificate is")}
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, &TLSFileError{File: TLSFileCert, Path: certFile, Err: err}
	}
	if _, err := parseCertificates(certPEM); err != nil {
		return tls.Certificate{}, &TLSFileError{File: TLSFileCert, Path: certFile, Err: err}
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, &TLSFileError{File: TLSFileKey, Path: keyFile, Err: err}
	}
	if block, _ := pem.Decode(keyPEM); block == nil {
		return tls.Certificate{}, &TLSFileError{File: TLSFileKey, Path: keyFile, Err: errors.New("holds no PEM private key (-----BEGIN PRIVATE KEY-----)")}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, &TLSFileError{File: TLSFileKey, Path: keyFile, Err: fmt.Errorf("does not go with the client certificate %q: %w", certFile, err)}
	}
	return cert, nil
}

// httpClient is the client for a repository or registry: t's TLS, the
// environment's proxy, no timeout but the context's.
func httpClient(t TLS) (*http.Client, error) {
	transport, err := httpTransport(t)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: transport}, nil
}

func httpTransport(t TLS) (*http.Transport, error) {
	config, err := t.ClientConfig()
	if err != nil {
		return nil, err
	}
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		base = &http.Transport{Proxy: http.ProxyFromEnvironment}
	}
	transport := base.Clone()
	transport.TLSClientConfig = config
	return transport, nil
}

// TLSErrorKind tells apart why talking to a repository over (or without)
// TLS failed.
type TLSErrorKind int

// The kinds of TLSError.
const (
	// UnknownAuthority: the server's certificate is signed by a CA that is
	// not trusted.
	UnknownAuthority TLSErrorKind = iota + 1
	// InvalidCertificate: the certificate is not valid for the host, has
	// expired, or is not usable for a server.
	InvalidCertificate
	// ServerSpeaksHTTP: an HTTPS request got a plain HTTP answer.
	ServerSpeaksHTTP
	// ServerSpeaksHTTPS: a plain HTTP request went to a server that
	// answers TLS.
	ServerSpeaksHTTPS
)

// TLSError is a failure to reach Host that a TLS setting fixes.
type TLSError struct {
	Kind TLSErrorKind
	Host string
	Err  error
}

func (e *TLSError) Error() string {
	switch e.Kind {
	case UnknownAuthority:
		return fmt.Sprintf("the certificate of %s is signed by an authority this machine does not trust: %v", e.Host, e.Err)
	case InvalidCertificate:
		return fmt.Sprintf("the certificate of %s is not valid: %v", e.Host, e.Err)
	case ServerSpeaksHTTP:
		return fmt.Sprintf("%s answers plain HTTP, not HTTPS: %v", e.Host, e.Err)
	case ServerSpeaksHTTPS:
		return fmt.Sprintf("%s answers HTTPS, not plain HTTP: %v", e.Host, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Host, e.Err)
}

func (e *TLSError) Unwrap() error { return e.Err }

// classifyTLS wraps err in a *TLSError when it is a certificate or a
// protocol mismatch with host.
func classifyTLS(host string, err error) error {
	var (
		unknown   x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		verifying *tls.CertificateVerificationError
		already   *TLSError
	)
	switch {
	case err == nil || errors.As(err, &already):
		return err
	case errors.As(err, &unknown):
		return &TLSError{Kind: UnknownAuthority, Host: host, Err: err}
	case errors.As(err, &hostname), errors.As(err, &invalid), errors.As(err, &verifying):
		return &TLSError{Kind: InvalidCertificate, Host: host, Err: err}
	case errors.Is(err, http.ErrSchemeMismatch), isHTTPRecordHeader(err):
		return &TLSError{Kind: ServerSpeaksHTTP, Host: host, Err: err}
	}
	return err
}

// isHTTPRecordHeader reports whether a TLS handshake got an HTTP response, which a bare
// transport returns (http.Client turns it into http.ErrSchemeMismatch).
func isHTTPRecordHeader(err error) bool {
	var header tls.RecordHeaderError
	return errors.As(err, &header) && string(header.RecordHeader[:]) == "HTTP/"
}

// classifyPlainHTTP wraps err, the failure of a plain HTTP exchange with
// host ("host:port"), in a *TLSError when host completes a TLS handshake:
// servers answer a plain request on a TLS port in ways of their own (a 400,
// a closed connection), so the port itself is asked.
func classifyPlainHTTP(ctx context.Context, host string, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	addr := host
	if _, _, splitErr := net.SplitHostPort(host); splitErr != nil {
		addr = net.JoinHostPort(host, "80")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	dialer := &tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // only asks whether the port speaks TLS; nothing is sent
	conn, dialErr := dialer.DialContext(ctx, "tcp", addr)
	if dialErr != nil {
		return err
	}
	conn.Close()
	return &TLSError{Kind: ServerSpeaksHTTPS, Host: host, Err: err}
}
