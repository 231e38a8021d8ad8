package chartserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// Option configures a server.
type Option func(*options)

type options struct {
	username, password      string
	tls, clientCertificates bool
}

// WithBasicAuth makes the server require these credentials.
func WithBasicAuth(username, password string) Option {
	return func(o *options) { o.username, o.password = username, password }
}

// WithTLS serves over HTTPS, with a certificate for localhost, 127.0.0.1
// and ::1 that a test CA made for the server signed; the server's CA field
// holds it.
func WithTLS() Option {
	return func(o *options) { o.tls = true }
}

// WithClientCertificates serves over HTTPS (WithTLS) and accepts only
// clients that present a certificate of the server's CA
// (CA.ClientCertificate).
func WithClientCertificates() Option {
	return func(o *options) { o.tls, o.clientCertificates = true, true }
}

// HTTPRepository is a chart repository served over HTTP, or HTTPS WithTLS,
// on loopback.
type HTTPRepository struct {
	// URL is the repository URL, without a trailing slash.
	URL                string
	Username, Password string
	// CA signed the server's certificate; nil over plain HTTP.
	CA *TestCA

	dir string
	mu  sync.Mutex
	// requests counts GETs by path, to tell a download from a cache hit.
	requests map[string]int
}

// NewHTTPRepository starts an empty chart repository; it stops at the end
// of the test.
func NewHTTPRepository(t testing.TB, opts ...Option) *HTTPRepository {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	r := &HTTPRepository{
		Username: o.username,
		Password: o.password,
		dir:      t.TempDir(),
		requests: map[string]int{},
	}
	files := http.FileServer(http.Dir(r.dir))
	server := httptest.NewUnstartedServer(basicAuth(o, "chart repository", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.requests[req.URL.Path]++
		r.mu.Unlock()
		files.ServeHTTP(w, req)
	})))
	r.CA = start(t, o, server)
	t.Cleanup(server.Close)
	r.URL = server.URL
	// An empty repository still has an index.
	r.reindex(t)
	return r
}

// Publish packages ch into the repository, replacing a package of the same
// name and version, regenerates index.yaml, and returns the package's
// digest, "sha256:<hex>".
func (r *HTTPRepository) Publish(t testing.TB, ch *helmchart.Chart) string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	path := Package(t, ch, r.dir)
	r.reindexLocked(t)
	return fileDigest(t, path)
}

// PublishArchive publishes a packaged chart as it is, under its own file
// name, and returns its digest.
func (r *HTTPRepository) PublishArchive(t testing.TB, archive string) string {
	t.Helper()
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatalf("read package: %v", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	target := filepath.Join(r.dir, filepath.Base(archive))
	if err := os.WriteFile(target, data, 0o644); err != nil {
		t.Fatalf("publish package: %v", err)
	}
	r.reindexLocked(t)
	return fileDigest(t, target)
}

// ReplaceWithoutReindex overwrites the package file ("web-1.0.0.tgz") with
// data and leaves index.yaml as it is, so the digest the index lists no
// longer matches: a tampered or half-uploaded package.
func (r *HTTPRepository) ReplaceWithoutReindex(t testing.TB, file string, data []byte) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := os.WriteFile(filepath.Join(r.dir, file), data, 0o644); err != nil {
		t.Fatalf("replace package: %v", err)
	}
}

// PublishFixture publishes the fixture chart name as it is.
func (r *HTTPRepository) PublishFixture(t testing.TB, name string) string {
	t.Helper()
	return r.Publish(t, LoadFixture(t, name))
}

// Requests returns how many times path ("/index.yaml",
// "/web-1.0.0.tgz") was requested.
func (r *HTTPRepository) Requests(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests[path]
}

func (r *HTTPRepository) reindex(t testing.TB) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reindexLocked(t)
}

// reindexLocked writes index.yaml for the packages in the repository, with
// relative URLs, as helm repo index does.
func (r *HTTPRepository) reindexLocked(t testing.TB) {
	t.Helper()
	index, err := repo.IndexDirectory(r.dir, "")
	if err != nil {
		t.Fatalf("index chart repository: %v", err)
	}
	index.SortEntries()
	if err := index.WriteFile(filepath.Join(r.dir, "index.yaml"), 0o644); err != nil {
		t.Fatalf("write index.yaml: %v", err)
	}
}

// basicAuth requires o's credentials when it has any.
func basicAuth(o options, realm string, next http.Handler) http.Handler {
	if o.username == "" && o.password == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		username, password, ok := req.BasicAuth()
		if !ok ||
			subtle.ConstantTimeCompare([]byte(username), []byte(o.username)) != 1 ||
			subtle.ConstantTimeCompare([]byte(password), []byte(o.password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="`+realm+`"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, req)
	})
}

func fileDigest(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read package: %v", err)
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}
