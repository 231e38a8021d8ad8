package chart

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/downloader"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"
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
func buildDependencies(ctx context.Context, dir string, plainHTTP bool) error {
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
	manager, err := dependencyManager(abs, work, ch.Metadata.Dependencies, plainHTTP)
	if err != nil {
		return err
	}
	if ch.Lock != nil {
		err = manager.Build()
	} else {
		err = manager.Update()
	}
	if err != nil {
		return fmt.Errorf("build the dependencies of chart %s in %q: %w", ch.Name(), dir, err)
	}
	return nil
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
// no `helm repo add` is needed and nothing of the machine's Helm configuration is used.
func dependencyManager(dir, work string, deps []*helmchart.Dependency, plainHTTP bool) (*downloader.Manager, error) {
	repositories := repo.NewFile()
	for i, dep := range deps {
		if strings.HasPrefix(dep.Repository, "http://") || strings.HasPrefix(dep.Repository, "https://") {
			repositories.Update(&repo.Entry{Name: fmt.Sprintf("dependency-%d", i), URL: strings.TrimSuffix(dep.Repository, "/")})
		}
		if strings.HasPrefix(dep.Repository, ociScheme) {
			if u, err := url.Parse(dep.Repository); err == nil && isLoopback(u.Host) {
				plainHTTP = true
			}
		}
	}
	config := filepath.Join(work, "repositories.yaml")
	if err := repositories.WriteFile(config, 0o600); err != nil {
		return nil, err
	}
	opts := []registry.ClientOption{registry.ClientOptWriter(io.Discard), registry.ClientOptCredentialsFile(filepath.Join(work, "registry.json"))}
	if plainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	client, err := registry.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	return &downloader.Manager{
		Out:       io.Discard,
		ChartPath: dir,
		Getters: getter.Providers{
			{Schemes: []string{"http", "https"}, New: getter.NewHTTPGetter},
			{Schemes: []string{registry.OCIScheme}, New: getter.NewOCIGetter},
		},
		RegistryClient:   client,
		RepositoryConfig: config,
		RepositoryCache:  filepath.Join(work, "cache"),
	}, nil
}
