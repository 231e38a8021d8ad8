package front

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
)

// clientCertificate is a certificate as Terraform's go-plugin makes for automatic mTLS, of a
// P-521 key, and its PEM.
func clientCertificate(t *testing.T) (tls.Certificate, string) {
	t.Helper()
	cert, err := selfSigned(elliptic.P521())
	if err != nil {
		t.Fatal(err)
	}
	return cert, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}))
}

// handshake connects a client presenting cert (none when empty) to a server of config, trusting
// the server certificate serverDER alone as go-plugin's client does, and returns the server's
// error.
func handshake(t *testing.T, config *tls.Config, serverDER []byte, cert *tls.Certificate) error {
	t.Helper()
	server, err := x509.ParseCertificate(serverDER)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(server)
	clientConfig := &tls.Config{RootCAs: roots, ServerName: "localhost", MinVersion: tls.VersionTLS12}
	if cert != nil {
		clientConfig.Certificates = []tls.Certificate{*cert}
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The client's side of a refusal is the server's error told again: only that is checked.
		c := tls.Client(a, clientConfig)
		if c.Handshake() == nil {
			_, _ = c.Read(make([]byte, 1)) // the server's refusal of a certificate comes after
		}
	}()
	s := tls.Server(b, config)
	serverErr := s.Handshake()
	if serverErr == nil {
		_, serverErr = s.Write([]byte{1})
	}
	_ = b.Close()
	<-done
	return serverErr
}

// The front's own certificate for automatic mTLS is a P-256 key's, and its server takes the
// client whose certificate Terraform gave alone, as go-plugin's would.
func TestAutoMTLS_takesTheClientTerraformNamesAlone(t *testing.T) {
	client, clientPEM := clientCertificate(t)
	config, der, err := autoMTLS(clientPEM)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	if key, ok := parsed.PublicKey.(*ecdsa.PublicKey); !ok || key.Curve != elliptic.P256() || !slices.Contains(parsed.DNSNames, "localhost") {
		t.Fatalf("server certificate key %T, names %v; want a P-256 key for localhost", parsed.PublicKey, parsed.DNSNames)
	}
	if err := handshake(t, config, der, &client); err != nil {
		t.Fatalf("the client Terraform named: %v", err)
	}
	other, _ := clientCertificate(t)
	if err := handshake(t, config, der, &other); err == nil {
		t.Fatal("another client's certificate was taken")
	}
	if err := handshake(t, config, der, nil); err == nil {
		t.Fatal("a client without a certificate was taken")
	}
	if _, _, err := autoMTLS("not a certificate"); err == nil {
		t.Fatal("autoMTLS took a PLUGIN_CLIENT_CERT without a certificate")
	}
}

// The handshake line go-plugin writes with a TLS configuration handed to it carries no
// certificate; the front's gets the certificate in the sixth field, whether the client
// multiplexes (a seventh field) or not. Lines of another shape pass as they are.
func TestWithServerCert_fillsTheSixthField(t *testing.T) {
	der := []byte{0xde, 0xad, 0xbe, 0xef}
	cert := base64.RawStdEncoding.EncodeToString(der)
	for _, tc := range []struct{ line, want string }{
		{"1|6|unix|/tmp/plugin1|grpc|\n", "1|6|unix|/tmp/plugin1|grpc|" + cert + "\n"},
		{"1|6|unix|/tmp/plugin1|grpc||true\n", "1|6|unix|/tmp/plugin1|grpc|" + cert + "|true\n"},
		{"1|6|unix|/tmp/plugin1|grpc|", "1|6|unix|/tmp/plugin1|grpc|" + cert},
		{"1|6|unix|/tmp/plugin1|grpc|QUJD\n", "1|6|unix|/tmp/plugin1|grpc|QUJD\n"},
		{"1|6|unix|/tmp/plugin1|grpc\n", "1|6|unix|/tmp/plugin1|grpc\n"},
		{"", ""},
	} {
		if got := withServerCert(tc.line, der); got != tc.want {
			t.Errorf("withServerCert(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

// What is written to os.Stdout after certifyHandshake reaches the real standard output: the
// first line with the certificate, the rest as written.
func TestCertifyHandshake_passesTheLineWithTheCertificate(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	t.Cleanup(func() { os.Stdout = saved })
	if err := certifyHandshake(w, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(os.Stdout, "1|6|unix|/tmp/p|grpc|\nlater\n"); err != nil {
		t.Fatal(err)
	}
	in := bufio.NewReader(r)
	var got []string
	for range 2 {
		line, err := in.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, line)
	}
	if want := []string{"1|6|unix|/tmp/p|grpc|AQID\n", "later\n"}; strings.Join(got, "") != strings.Join(want, "") {
		t.Fatalf("standard output %q, want %q", got, want)
	}
}
