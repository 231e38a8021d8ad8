package chartserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/distribution/distribution/v3/configuration"
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd" // basic authentication
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
	"github.com/sirupsen/logrus"
	"golang.org/x/crypto/bcrypt"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/registry"
)

// quietRegistryLogs turns down the distribution registry's logging, which
// goes to logrus's standard logger and would fill test output with a line
// per request.
var quietRegistryLogs sync.Once

// OCIRegistry is the distribution registry, in memory, on loopback, over
// plain HTTP, or HTTPS WithTLS.
type OCIRegistry struct {
	// Host is "127.0.0.1:<port>".
	Host               string
	Username, Password string
	// CA signed the server's certificate; nil over plain HTTP.
	CA *TestCA
	// clientCertificate is what Publish presents when the registry
	// requires one.
	clientCertFile, clientKeyFile string

	clientDir string
}

// NewOCIRegistry starts an empty registry; it stops at the end of the
// test.
func NewOCIRegistry(t testing.TB, opts ...Option) *OCIRegistry {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	quietRegistryLogs.Do(func() {
		logrus.SetLevel(logrus.ErrorLevel)
		logrus.SetOutput(io.Discard)
	})
	dir := t.TempDir()

	config := &configuration.Configuration{}
	config.Storage = configuration.Storage{
		"inmemory":    configuration.Parameters{},
		"maintenance": configuration.Parameters{"uploadpurging": map[any]any{"enabled": false}},
	}
	config.HTTP.Secret = randomHex(t)
	if o.username != "" || o.password != "" {
		config.Auth = configuration.Auth{
			"htpasswd": configuration.Parameters{
				"realm": "chartserver",
				"path":  writeHtpasswd(t, dir, o.username, o.password),
			},
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	app := handlers.NewApp(ctx, config)
	server := httptest.NewUnstartedServer(app)
	ca := start(t, o, server)
	t.Cleanup(func() {
		server.Close()
		cancel()
	})
	r := &OCIRegistry{
		Host:      strings.TrimPrefix(strings.TrimPrefix(server.URL, "http://"), "https://"),
		Username:  o.username,
		Password:  o.password,
		CA:        ca,
		clientDir: dir,
	}
	if o.clientCertificates {
		r.clientCertFile, r.clientKeyFile = ca.ClientCertificate(t, "publisher")
	}
	return r
}

// Repository returns the oci:// URL charts are published under,
// "oci://127.0.0.1:<port>/charts"; a chart's reference is this plus
// "/<name>".
func (r *OCIRegistry) Repository() string {
	return "oci://" + r.Host + "/charts"
}

// Publish pushes ch as helm push would, to
// oci://<host>/charts/<name>:<version> (a '+' in the version becomes '_'),
// replacing what the tag pointed at, and returns the chart's reference
// without tag and the digest of its chart layer, "sha256:<hex>".
func (r *OCIRegistry) Publish(t testing.TB, ch *helmchart.Chart) (ref, digest string) {
	t.Helper()
	return r.PublishArchive(t, Package(t, ch, filepath.Join(r.clientDir, "packages")))
}

// PublishArchive pushes a packaged chart as it is; see Publish.
func (r *OCIRegistry) PublishArchive(t testing.TB, archive string) (ref, digest string) {
	t.Helper()
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatalf("read package: %v", err)
	}
	ch, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("load package %s: %v", archive, err)
	}
	options := []registry.ClientOption{
		registry.ClientOptWriter(io.Discard),
		registry.ClientOptCredentialsFile(filepath.Join(r.clientDir, "config.json")),
		r.transport(t),
	}
	if r.Username != "" || r.Password != "" {
		options = append(options, registry.ClientOptBasicAuth(r.Username, r.Password))
	}
	client, err := registry.NewClient(options...)
	if err != nil {
		t.Fatalf("registry client: %v", err)
	}
	ref = r.Repository() + "/" + ch.Name()
	// Helm's client turns a '+' in the tag into '_' itself.
	result, err := client.Push(data, strings.TrimPrefix(ref, "oci://")+":"+ch.Metadata.Version)
	if err != nil {
		t.Fatalf("push chart %s %s: %v", ch.Name(), ch.Metadata.Version, err)
	}
	return ref, result.Chart.Digest
}

// PublishFixture publishes the fixture chart name as it is.
func (r *OCIRegistry) PublishFixture(t testing.TB, name string) (ref, digest string) {
	t.Helper()
	return r.Publish(t, LoadFixture(t, name))
}

// transport is how Publish reaches the registry: plain HTTP, or TLS trusting
// the registry's CA and with a client certificate when it requires one.
func (r *OCIRegistry) transport(t testing.TB) registry.ClientOption {
	t.Helper()
	if r.CA == nil {
		return registry.ClientOptPlainHTTP()
	}
	config := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: r.CA.Pool()}
	if r.clientCertFile != "" {
		cert, err := tls.LoadX509KeyPair(r.clientCertFile, r.clientKeyFile)
		if err != nil {
			t.Fatalf("load client certificate: %v", err)
		}
		config.Certificates = []tls.Certificate{cert}
	}
	return registry.ClientOptHTTPClient(&http.Client{Transport: &http.Transport{TLSClientConfig: config}})
}

func writeHtpasswd(t testing.TB, dir, username, password string) string {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatalf("hash registry password: %v", err)
	}
	path := filepath.Join(dir, "htpasswd")
	if err := os.WriteFile(path, []byte(fmt.Sprintf("%s:%s\n", username, hash)), 0o600); err != nil {
		t.Fatalf("write htpasswd: %v", err)
	}
	return path
}

func randomHex(t testing.TB) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("random: %v", err)
	}
	return hex.EncodeToString(b)
}
