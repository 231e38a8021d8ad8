package chart

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"
)

// maxDownloadBytes bounds an index or a package; charts are kilobytes, the
// largest public indexes tens of megabytes.
const maxDownloadBytes = 256 << 20

// loadFromRepository resolves src.Chart at src.Version in the HTTP(S)
// repository src.Repository and loads the package it points at.
func loadFromRepository(ctx context.Context, src Source) (*Loaded, error) {
	repoURL := strings.TrimSuffix(src.Repository, "/")
	parsed, err := url.Parse(repoURL)
	if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
		return nil, fmt.Errorf("repository %q is not an http(s):// or oci:// URL", redactURL(src.Repository))
	}
	client, err := httpClient(src.TLS)
	if err != nil {
		return nil, err
	}
	get := func(rawURL string) ([]byte, error) { return download(ctx, client, src, parsed, rawURL) }
	indexData, err := get(repoURL + "/index.yaml")
	if err != nil {
		return nil, fmt.Errorf("read index of repository %s: %w", redactURL(repoURL), err)
	}
	index, err := parseIndex(indexData)
	if err != nil {
		return nil, fmt.Errorf("read index of repository %s: %w", redactURL(repoURL), err)
	}
	entry, err := resolveIndexEntry(index, src.Chart, src.Version)
	if err != nil {
		return nil, fmt.Errorf("repository %s: %w", redactURL(repoURL), err)
	}
	if len(entry.URLs) == 0 {
		return nil, fmt.Errorf("repository %s: chart %s %s has no download URL in index.yaml", redactURL(repoURL), entry.Name, entry.Version)
	}
	packageURL, err := repo.ResolveReferenceURL(repoURL, entry.URLs[0])
	if err != nil {
		return nil, fmt.Errorf("repository %s: chart %s %s: bad download URL: %w", redactURL(repoURL), entry.Name, entry.Version, err)
	}

	data, err := cachedPackage(src.CacheDir, entry.Digest)
	if data == nil || err != nil {
		data, err = get(packageURL)
		if err != nil {
			return nil, fmt.Errorf("download chart %s %s: %w", entry.Name, entry.Version, err)
		}
	}
	if entry.Digest != "" {
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); !strings.EqualFold(got, entry.Digest) {
			return nil, fmt.Errorf("chart %s %s from %s: package digest sha256:%s differs from sha256:%s in index.yaml", entry.Name, entry.Version, redactURL(packageURL), got, entry.Digest)
		}
	}
	loaded, err := loadArchive(data)
	if err != nil {
		return nil, fmt.Errorf("load chart %s %s from %s: %w", entry.Name, entry.Version, redactURL(packageURL), err)
	}
	if loaded.Chart.Name() != entry.Name || loaded.Version != entry.Version {
		return nil, fmt.Errorf("package %s holds chart %s %s, but index.yaml lists it as %s %s", redactURL(packageURL), loaded.Chart.Name(), loaded.Version, entry.Name, entry.Version)
	}
	storeCachedPackage(src.CacheDir, loaded.Digest, data)
	return loaded, nil
}

// parseIndex reads a repository index (YAML or JSON), dropping empty
// entries and sorting versions newest first, as Helm does.
func parseIndex(data []byte) (*repo.IndexFile, error) {
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, errors.New("index.yaml is empty")
	}
	index := &repo.IndexFile{}
	if err := yaml.Unmarshal(data, index); err != nil {
		return nil, fmt.Errorf("parse index.yaml: %w", err)
	}
	if index.APIVersion == "" {
		return nil, errors.New("index.yaml has no apiVersion; is the URL a chart repository?")
	}
	for name, versions := range index.Entries {
		kept := versions[:0]
		for _, v := range versions {
			if v != nil && v.Metadata != nil && v.Version != "" {
				kept = append(kept, v)
			}
		}
		index.Entries[name] = kept
	}
	index.SortEntries()
	return index, nil
}

// resolveIndexEntry picks the one version of name that version (exact,
// constraint, or empty for the latest stable) selects.
func resolveIndexEntry(index *repo.IndexFile, name, version string) (*repo.ChartVersion, error) {
	versions, ok := index.Entries[name]
	if !ok || len(versions) == 0 {
		return nil, fmt.Errorf("chart %q not found in index.yaml", name)
	}
	entry, err := index.Get(name, version)
	if err != nil {
		return nil, fmt.Errorf("chart %q has no version matching %q; available: %s", name, version, listVersions(versions))
	}
	return entry, nil
}

// listVersions names the newest versions of a chart for an error message.
func listVersions(versions repo.ChartVersions) string {
	const shown = 10
	names := make([]string, 0, shown)
	for i, v := range versions {
		if i == shown {
			names = append(names, fmt.Sprintf("and %d more", len(versions)-shown))
			break
		}
		names = append(names, v.Version)
	}
	return strings.Join(names, ", ")
}

// download GETs rawURL with client. Credentials go only to the repository's
// own host, as Helm does unless told to pass them on.
func download(ctx context.Context, client *http.Client, src Source, repoURL *url.URL, rawURL string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", redactURL(rawURL), err)
	}
	if src.Username != "" || src.Password != "" {
		if req.URL.Host == repoURL.Host {
			req.SetBasicAuth(src.Username, src.Password)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			err = urlErr.Err
		}
		if req.URL.Scheme == "http" {
			return nil, fmt.Errorf("GET %s: %w", redactURL(rawURL), classifyPlainHTTP(ctx, req.URL.Host, err))
		}
		return nil, fmt.Errorf("GET %s: %w", redactURL(rawURL), classifyTLS(req.URL.Host, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusBadRequest && req.URL.Scheme == "http" {
		return nil, fmt.Errorf("GET %s: %w", redactURL(rawURL), classifyPlainHTTP(ctx, req.URL.Host, errors.New(resp.Status)))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", redactURL(rawURL), resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDownloadBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", redactURL(rawURL), err)
	}
	if len(data) > maxDownloadBytes {
		return nil, fmt.Errorf("GET %s: larger than %d bytes", redactURL(rawURL), maxDownloadBytes)
	}
	return data, nil
}

// redactURL drops any user:password@ from a URL for messages.
func redactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return rawURL
	}
	return u.Redacted()
}

// cachedPackage returns the package with the given hex sha256 digest from
// cacheDir, or nil when it is not there (or no longer matches).
func cachedPackage(cacheDir, hexDigest string) ([]byte, error) {
	if cacheDir == "" || hexDigest == "" {
		return nil, nil
	}
	digest := "sha256:" + strings.ToLower(hexDigest)
	data, err := os.ReadFile(cachePath(cacheDir, digest))
	if err != nil {
		return nil, nil
	}
	if bytesDigest(data) != digest {
		return nil, nil
	}
	return data, nil
}

// storeCachedPackage keeps data in cacheDir; a failure only costs a later
// download, so it is not reported.
func storeCachedPackage(cacheDir, digest string, data []byte) {
	if cacheDir == "" {
		return
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return
	}
	target := cachePath(cacheDir, digest)
	tmp, err := os.CreateTemp(cacheDir, ".download-*")
	if err != nil {
		return
	}
	_, writeErr := tmp.Write(data)
	closeErr := tmp.Close()
	if writeErr != nil || closeErr != nil || os.Rename(tmp.Name(), target) != nil {
		os.Remove(tmp.Name())
	}
}

func cachePath(cacheDir, digest string) string {
	return filepath.Join(cacheDir, strings.ReplaceAll(digest, ":", "-")+".tgz")
}
