package chart

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestTLS_ClientConfig(t *testing.T) {
	ca := chartserver.NewTestCA(t)
	other := chartserver.NewTestCA(t)
	certFile, keyFile := ca.ClientCertificate(t, "deployer")
	_, otherKey := other.ClientCertificate(t, "deployer")
	caPEM := readFile(t, ca.CertFile)
	bundle := writeFile(t, "bundle.pem", readFile(t, other.CertFile)+caPEM)

	serverCert, err := x509.ParseCertificate(ca.ServerCertificate(t).Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	trusts := func(pool *x509.CertPool) bool {
		_, err := serverCert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "localhost"})
		return err == nil
	}

	t.Run("a CA bundle adds its authorities", func(t *testing.T) {
		for _, file := range []string{ca.CertFile, bundle} {
			config, err := TLS{CAFile: file}.ClientConfig()
			if err != nil {
				t.Fatal(err)
			}
			if !trusts(config.RootCAs) {
				t.Errorf("%s: the configuration does not trust a certificate the CA signed", file)
			}
		}
	})
	t.Run("without a CA bundle, the system's authorities", func(t *testing.T) {
		config, err := TLS{}.ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		if config.RootCAs != nil || config.InsecureSkipVerify || len(config.Certificates) != 0 {
			t.Errorf("zero TLS gave RootCAs %v, InsecureSkipVerify %v, %d certificates", config.RootCAs, config.InsecureSkipVerify, len(config.Certificates))
		}
	})
	t.Run("insecure", func(t *testing.T) {
		config, err := TLS{InsecureSkipVerify: true}.ClientConfig()
		if err != nil || !config.InsecureSkipVerify {
			t.Errorf("InsecureSkipVerify = %v, %v", config.InsecureSkipVerify, err)
		}
	})
	t.Run("a client certificate", func(t *testing.T) {
		config, err := TLS{CertFile: certFile, KeyFile: keyFile}.ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		if len(config.Certificates) != 1 {
			t.Fatalf("%d certificates, want 1", len(config.Certificates))
		}
	})

	for _, tt := range []struct {
		name     string
		tls      TLS
		wantFile TLSFile
		wantText string
	}{
		{"missing CA file", TLS{CAFile: filepath.Join(t.TempDir(), "absent.pem")}, TLSFileCA, "no such file"},
		{"CA file not PEM", TLS{CAFile: writeFile(t, "ca.pem", "not a certificate\n")}, TLSFileCA, "holds no PEM certificate"},
		{"a key in the CA file", TLS{CAFile: keyFile}, TLSFileCA, `type "PRIVATE KEY"`},
		{"a broken certificate", TLS{CAFile: writeFile(t, "ca.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")}, TLSFileCA, "certificate 1:"},
		{"certificate without key", TLS{CertFile: certFile}, TLSFileKey, "is not set"},
		{"key without certificate", TLS{KeyFile: keyFile}, TLSFileCert, "is not set"},
		{"missing key file", TLS{CertFile: certFile, KeyFile: filepath.Join(t.TempDir(), "absent.pem")}, TLSFileKey, "no such file"},
		{"key file not PEM", TLS{CertFile: certFile, KeyFile: writeFile(t, "key.pem", "secret")}, TLSFileKey, "holds no PEM private key"},
		{"certificate file not PEM", TLS{CertFile: writeFile(t, "cert.pem", "x"), KeyFile: keyFile}, TLSFileCert, "holds no PEM certificate"},
		{"key of another certificate", TLS{CertFile: certFile, KeyFile: otherKey}, TLSFileKey, "does not go with the client certificate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.tls.ClientConfig()
			var fileErr *TLSFileError
			if !errors.As(err, &fileErr) {
				t.Fatalf("error %v is not a *TLSFileError", err)
			}
			if fileErr.File != tt.wantFile || !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error on the %s: %v; want the %s and %q", fileErr.File, err, tt.wantFile, tt.wantText)
			}
		})
	}
}

func TestLoad_ociRegistryOverTLS(t *testing.T) {
	const password = "tls-pa55word"
	registry := chartserver.NewOCIRegistry(t, chartserver.WithTLS(), chartserver.WithBasicAuth("deployer", password))
	ref, digest := registry.PublishFixture(t, "web")
	src := func(reach TLS, plainHTTP bool) Source {
		return Source{Chart: ref, Version: "1.0.0", Username: "deployer", Password: password, TLS: reach, PlainHTTP: plainHTTP}
	}

	for name, reach := range map[string]TLS{
		"with the CA": {CAFile: registry.CA.CertFile},
		"insecure":    {InsecureSkipVerify: true},
	} {
		loaded, err := Load(context.Background(), src(reach, false))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if loaded.Digest != digest {
			t.Errorf("%s: digest %s, want %s", name, loaded.Digest, digest)
		}
	}
	_, err := Load(context.Background(), src(TLS{}, false))
	if kind := tlsErrorKind(err); kind != UnknownAuthority {
		t.Errorf("without the CA: kind %d, error %v", kind, err)
	}
	mustContain(t, "error", errString(err), "signed by an authority this machine does not trust", "x509")
	_, err = Load(context.Background(), src(TLS{CAFile: chartserver.NewTestCA(t).CertFile}, false))
	if kind := tlsErrorKind(err); kind != UnknownAuthority {
		t.Errorf("with another CA: kind %d, error %v", kind, err)
	}
	_, err = Load(context.Background(), src(TLS{}, true))
	if kind := tlsErrorKind(err); kind != ServerSpeaksHTTPS {
		t.Errorf("plain HTTP to an HTTPS registry: kind %d, error %v", kind, err)
	}
	if err != nil && strings.Contains(err.Error(), password) {
		t.Errorf("error %q contains the password", err)
	}
}

func TestLoad_clientCertificates(t *testing.T) {
	registry := chartserver.NewOCIRegistry(t, chartserver.WithClientCertificates())
	ref, digest := registry.PublishFixture(t, "web")
	repository := chartserver.NewHTTPRepository(t, chartserver.WithClientCertificates())
	repositoryDigest := repository.PublishFixture(t, "web")
	for _, tt := range []struct {
		src    Source
		ca     *chartserver.TestCA
		digest string
	}{
		{Source{Chart: ref, Version: "1.0.0"}, registry.CA, digest},
		{Source{Chart: "web", Repository: repository.URL, Version: "1.0.0"}, repository.CA, repositoryDigest},
	} {
		certFile, keyFile := tt.ca.ClientCertificate(t, "deployer")
		tt.src.TLS = TLS{CAFile: tt.ca.CertFile, CertFile: certFile, KeyFile: keyFile}
		loaded, err := Load(context.Background(), tt.src)
		if err != nil {
			t.Fatalf("%s with a client certificate: %v", tt.src.Chart, err)
		}
		if loaded.Digest != tt.digest {
			t.Errorf("%s: digest %s, want %s", tt.src.Chart, loaded.Digest, tt.digest)
		}
		tt.src.TLS = TLS{CAFile: tt.ca.CertFile}
		if _, err := Load(context.Background(), tt.src); err == nil {
			t.Errorf("%s loaded without the client certificate the server requires", tt.src.Chart)
		}
	}
}

func TestLoad_httpRepositoryOverTLS(t *testing.T) {
	repository := chartserver.NewHTTPRepository(t, chartserver.WithTLS())
	digest := repository.PublishFixture(t, "web")
	src := Source{Chart: "web", Repository: repository.URL, Version: "1.0.0", TLS: TLS{CAFile: repository.CA.CertFile}}
	loaded, err := Load(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Digest != digest {
		t.Errorf("digest %s, want %s", loaded.Digest, digest)
	}
	src.TLS = TLS{}
	_, err = Load(context.Background(), src)
	if kind := tlsErrorKind(err); kind != UnknownAuthority {
		t.Errorf("without the CA: kind %d, error %v", kind, err)
	}
	src.Repository = "http://" + strings.TrimPrefix(repository.URL, "https://")
	_, err = Load(context.Background(), src)
	if kind := tlsErrorKind(err); kind != ServerSpeaksHTTPS {
		t.Errorf("http:// to an HTTPS repository: kind %d, error %v", kind, err)
	}
	plain := chartserver.NewHTTPRepository(t)
	plain.PublishFixture(t, "web")
	src.Repository = "https://" + strings.TrimPrefix(plain.URL, "http://")
	_, err = Load(context.Background(), src)
	if kind := tlsErrorKind(err); kind != ServerSpeaksHTTP {
		t.Errorf("https:// to a plain-HTTP repository: kind %d, error %v", kind, err)
	}
}

// The dependencies dependency_update fetches are reached with the same TLS settings.
func TestLoad_dependencyUpdateOverTLS(t *testing.T) {
	repo := chartserver.NewHTTPRepository(t, chartserver.WithTLS())
	repo.PublishFixture(t, "web")
	registry := chartserver.NewOCIRegistry(t, chartserver.WithTLS())
	registry.PublishFixture(t, "with-hooks")
	bundle := writeFile(t, "bundle.pem", readFile(t, repo.CA.CertFile)+readFile(t, registry.CA.CertFile))
	deps := "  - name: lib\n    version: 0.1.0\n    repository: file://../lib\n" +
		"  - name: web\n    version: ^1.0.0\n    repository: " + repo.URL + "\n" +
		"  - name: with-hooks\n    version: 0.1.0\n    repository: " + registry.Repository() + "\n"

	for name, reach := range map[string]TLS{"with the CAs": {CAFile: bundle}, "insecure": {InsecureSkipVerify: true}} {
		l, err := Load(context.Background(), Source{Chart: writeUmbrella(t, deps, ""), DependencyUpdate: true, TLS: reach})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := dependencyVersions(l), []string{"lib@0.1.0", "web@1.0.0", "with-hooks@0.1.0"}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: dependencies = %v, want %v", name, got, want)
		}
	}
	for name, deps := range map[string]string{
		"HTTP repository": "  - name: web\n    version: ^1.0.0\n    repository: " + repo.URL + "\n",
		"OCI registry":    "  - name: with-hooks\n    version: 0.1.0\n    repository: " + registry.Repository() + "\n",
	} {
		_, err := Load(context.Background(), Source{Chart: writeUmbrella(t, deps, ""), DependencyUpdate: true})
		if kind := tlsErrorKind(err); kind != UnknownAuthority {
			t.Errorf("%s without the CA: kind %d, error %v", name, kind, err)
		}
	}
	ociDep := "  - name: with-hooks\n    version: 0.1.0\n    repository: " + registry.Repository() + "\n"
	_, err := Load(context.Background(), Source{Chart: writeUmbrella(t, ociDep, ""), DependencyUpdate: true, PlainHTTP: true})
	if kind := tlsErrorKind(err); kind != ServerSpeaksHTTPS {
		t.Errorf("plain HTTP to an HTTPS registry: kind %d, error %v", kind, err)
	}
	plain := chartserver.NewOCIRegistry(t)
	plain.PublishFixture(t, "with-hooks")
	plainDep := "  - name: with-hooks\n    version: 0.1.0\n    repository: " + plain.Repository() + "\n"
	_, err = Load(context.Background(), Source{Chart: writeUmbrella(t, plainDep, ""), DependencyUpdate: true})
	if kind := tlsErrorKind(err); kind != ServerSpeaksHTTP {
		t.Errorf("HTTPS to a plain-HTTP registry: kind %d, error %v", kind, err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestClassifyTLS(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want TLSErrorKind
	}{
		{"unknown authority", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, UnknownAuthority},
		{"another host name", &tls.CertificateVerificationError{Err: x509.HostnameError{Host: "charts.example"}}, InvalidCertificate},
		{"expired", fmt.Errorf("get: %w", x509.CertificateInvalidError{Reason: x509.Expired}), InvalidCertificate},
		{"plain HTTP answer", &url.Error{Op: "Get", URL: "https://x", Err: http.ErrSchemeMismatch}, ServerSpeaksHTTP},
		{"plain HTTP answer to a bare transport", tls.RecordHeaderError{RecordHeader: [5]byte{'H', 'T', 'T', 'P', '/'}}, ServerSpeaksHTTP},
		{"another TLS record", tls.RecordHeaderError{RecordHeader: [5]byte{0x15, 3, 3, 0, 2}}, 0},
		{"refused", errors.New("connection refused"), 0},
	} {
		if got := tlsErrorKind(classifyTLS("charts.example:443", tt.err)); got != tt.want {
			t.Errorf("%s: kind %d, want %d", tt.name, got, tt.want)
		}
	}
}
