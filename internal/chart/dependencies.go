package chart

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/downloader"
	"helm.sh/helm/v4/pkg/getter"
	"helm.sh/helm/v4/pkg/helmpath"
	"helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// dependencyBuilds serializes the dependency builds of one chart directory: Terraform plans
// releases in parallel, and two builds writing charts/ at once would corrupt it.
var (
	dependencyBuildsMu sync.Mutex
	dependencyBuilds   = map[string]*sync.Mutex{} // by chart directory
)

// dependencyBuild returns the lock of the chart directory dir.
func dependencyBuild(dir string) *sync.Mutex {
	dependencyBuildsMu.Lock()
	defer dependencyBuildsMu.Unlock()
	mu, ok := dependencyBuilds[dir]
	if !ok {
		mu = &sync.Mutex{}
		dependencyBuilds[dir] = mu
	}
	return mu
}

// buildDependencies brings the charts/ directory of the chart directory dir in line with
// its Chart.yaml, as `helm dependency build` does: the versions Chart.lock records when there
// is one, else the newest versions the constraints allow (and Chart.lock is written).
// file://, HTTP repository and OCI dependencies are fetched. Nothing is fetched when charts/
// already holds every dependency at its locked version.
func buildDependencies(ctx context.Context, dir string, plainHTTP bool, reach TLS) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	mu := dependencyBuild(abs)
	mu.Lock()
	defer mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	ch, err := loader.LoadDir(abs)
	if err != nil {
		return fmt.Errorf("load chart directory %q: %w", dir, err)
	}
	if dependenciesCurrent(ch) {
		return nil
	}
	work, err := os.MkdirTemp("", "gitlabk8s-dependencies-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	manager, registryFailures, err := dependencyManager(ctx, abs, work, ch.Metadata.Dependencies, plainHTTP, reach)
	if err != nil {
		return err
	}
	if ch.Lock != nil {
		err = manager.Build()
	} else {
		err = manager.Update()
	}
	if err != nil {
		err = explainRegistryFailure(ctx, registryFailures, ch.Metadata.Dependencies, plainHTTP, err)
		return fmt.Errorf("build the dependencies of chart %s in %q: %w", ch.Name(), dir, err)
	}
	return nil
}

// explainRegistryFailure makes err, a failed dependency build, a *TLSError when what failed
// was reaching an OCI registry over TLS, or over plain HTTP a registry that speaks TLS: Helm's
// registry client keeps only the text of the errors it wraps.
func explainRegistryFailure(ctx context.Context, failures *failureRecorder, deps []*helmchart.Dependency, plainHTTP bool, err error) error {
	if tlsErr := (*TLSError)(nil); errors.As(err, &tlsErr) {
		return err
	}
	if host, failure := failures.first(); failure != nil {
		if tlsErr := (*TLSError)(nil); errors.As(classifyTLS(host, failure), &tlsErr) {
			return &TLSError{Kind: tlsErr.Kind, Host: host, Err: err}
		}
	}
	if !plainHTTP {
		return err
	}
	for _, dep := range deps {
		if u, parseErr := url.Parse(dep.Repository); parseErr == nil && u.Scheme+"://" == ociScheme {
			if tlsErr := (*TLSError)(nil); errors.As(classifyPlainHTTP(ctx, u.Host, err), &tlsErr) {
				return tlsErr
			}
		}
	}
	return err
}

// failureRecorder is a transport that keeps the first error of a round trip, with its host.
type failureRecorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	host string
	err  error
}

func (f *failureRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := f.base.RoundTrip(req)
	if err != nil {
		f.mu.Lock()
		if f.err == nil {
			f.host, f.err = req.URL.Host, err
		}
		f.mu.Unlock()
	}
	return resp, err
}

func (f *failureRecorder) first() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.host, f.err
}

// dependenciesCurrent reports whether charts/ holds every dependency of ch, at the version
// Chart.lock records when there is one.
func dependenciesCurrent(ch *helmchart.Chart) bool {
	present := make(map[string]string, len(ch.Dependencies()))
	for _, dep := range ch.Dependencies() {
		present[dep.Name()] = dep.Metadata.Version
	}
	for _, dep := range ch.Metadata.Dependencies {
		if _, ok := present[dep.Name]; !ok {
			return false
		}
	}
	if ch.Lock != nil {
		for _, dep := range ch.Lock.Dependencies {
			if present[dep.Name] != dep.Version {
				return false
			}
		}
	}
	return true
}

// dependencyManager is Helm's dependency manager for the chart in dir, with a repository
// configuration of its own in work that lists every HTTP repository the dependencies name, so
// no `helm repo add` is needed and nothing of the machine's Helm configuration is used. Every
// repository and registry is reached with reach's TLS; registries over plain HTTP only with
// plainHTTP. The repositories' indexes are downloaded here, so that a failure to reach one is
// an error that says why (Helm's own update only prints it).
func dependencyManager(ctx context.Context, dir, work string, deps []*helmchart.Dependency, plainHTTP bool, reach TLS) (*downloader.Manager, *failureRecorder, error) {
	transport, err := httpTransport(reach)
	if err != nil {
		return nil, nil, err
	}
	client := &http.Client{Transport: transport}
	cache := filepath.Join(work, "cache")
	repositories := repo.NewFile()
	for i, dep := range deps {
		if !strings.HasPrefix(dep.Repository, "http://") && !strings.HasPrefix(dep.Repository, "https://") {
			continue
		}
		entry := &repo.Entry{Name: fmt.Sprintf("dependency-%d", i), URL: strings.TrimSuffix(dep.Repository, "/")}
		if slices.ContainsFunc(repositories.Repositories, func(e *repo.Entry) bool { return e.URL == entry.URL }) {
			continue
		}
		if err := cacheIndex(ctx, client, entry, cache); err != nil {
			return nil, nil, fmt.Errorf("dependency %s: %w", dep.Name, err)
		}
		repositories.Update(entry)
	}
	config := filepath.Join(work, "repositories.yaml")
	if err := repositories.WriteFile(config, 0o600); err != nil {
		return nil, nil, err
	}
	failures := &failureRecorder{base: transport}
	opts := []registry.ClientOption{
		registry.ClientOptWriter(io.Discard),
		registry.ClientOptCredentialsFile(filepath.Join(work, "registry.json")),
		registry.ClientOptHTTPClient(&http.Client{Transport: failures}),
	}
	if plainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	registryClient, err := registry.NewClient(opts...)
	if err != nil {
		return nil, nil, err
	}
	withTransport := func(options ...getter.Option) (getter.Getter, error) {
		return getter.NewHTTPGetter(append(options, getter.WithTransport(transport))...)
	}
	return &downloader.Manager{
		Out:       io.Discard,
		ChartPath: dir,
		Getters: getter.Providers{
			{Schemes: []string{"http", "https"}, New: withTransport},
			{Schemes: []string{registry.OCIScheme}, New: getter.NewOCIGetter},
		},
		RegistryClient:   registryClient,
		RepositoryConfig: config,
		RepositoryCache:  cache,
		// Helm keeps the charts it downloads in a content cache; this one is the work
		// directory's, so nothing of the machine's Helm cache is read or written.
		ContentCache: filepath.Join(work, "content"),
		SkipUpdate:   true,
	}, failures, nil
}

// cacheIndex downloads the index of the repository entry names into cache, where Helm's
// manager reads it.
func cacheIndex(ctx context.Context, client *http.Client, entry *repo.Entry, cache string) error {
	repoURL, err := url.Parse(entry.URL)
	if err != nil {
		return fmt.Errorf("repository %q: %w", redactURL(entry.URL), err)
	}
	data, err := download(ctx, client, Source{}, repoURL, entry.URL+"/index.yaml")
	if err != nil {
		return fmt.Errorf("read index of repository %s: %w", redactURL(entry.URL), err)
	}
	if _, err := parseIndex(data); err != nil {
		return fmt.Errorf("read index of repository %s: %w", redactURL(entry.URL), err)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(cache, helmpath.CacheIndexFile(entry.Name)), data, 0o644)
}
