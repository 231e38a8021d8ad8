package chart

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// The media types Helm pushes a chart's package under; the legacy one is
// what Helm wrote before OCI support left experimental status.
const (
	chartLayerMediaType       = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	legacyChartLayerMediaType = "application/tar+gzip"
)

// maxManifestBytes bounds an OCI manifest; Helm's have two layers.
const maxManifestBytes = 4 << 20

// loadOCI resolves ref ("oci://registry/path/name[:tag|@digest]") at
// src.Version and loads the chart layer of the manifest it points at.
func loadOCI(ctx context.Context, src Source, ref string) (*Loaded, error) {
	parsed, err := registry.ParseReference(strings.TrimPrefix(ref, ociScheme))
	if err != nil {
		return nil, fmt.Errorf("oci reference %q: %w", ref, err)
	}
	repository, err := remote.NewRepository(parsed.Registry + "/" + parsed.Repository)
	if err != nil {
		return nil, fmt.Errorf("oci reference %q: %w", ref, err)
	}
	client, err := httpClient(src.TLS)
	if err != nil {
		return nil, err
	}
	repository.PlainHTTP = src.PlainHTTP
	repository.Client = &auth.Client{
		Client:     client,
		Cache:      auth.NewCache(),
		Credential: auth.StaticCredential(parsed.Registry, auth.Credential{Username: src.Username, Password: src.Password}),
	}
	where := ociScheme + parsed.Registry + "/" + parsed.Repository
	explain := func(err error) error { return explainOCIError(ctx, src.PlainHTTP, parsed.Registry, err) }

	tag, err := resolveOCITag(ctx, repository, parsed.Reference, src.Version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, explain(err))
	}
	layer, err := fetchChartLayer(ctx, repository, tag)
	if err != nil {
		return nil, fmt.Errorf("%s:%s: %w", where, tag, explain(err))
	}
	if cached, _ := cachedPackage(src.CacheDir, layer.Digest.Encoded()); cached != nil {
		return loadOCIPackage(src, where, tag, cached)
	}
	data, err := content.FetchAll(ctx, repository, layer)
	if err != nil {
		return nil, fmt.Errorf("%s:%s: fetch chart layer: %w", where, tag, explain(err))
	}
	return loadOCIPackage(src, where, tag, data)
}

func loadOCIPackage(src Source, where, tag string, data []byte) (*Loaded, error) {
	loaded, err := loadArchive(data)
	if err != nil {
		return nil, fmt.Errorf("%s:%s: load chart: %w", where, tag, err)
	}
	if !strings.HasPrefix(tag, "sha256:") && loaded.Version != tagToVersion(tag) {
		return nil, fmt.Errorf("%s:%s holds chart version %s, not %s", where, tag, loaded.Version, tagToVersion(tag))
	}
	storeCachedPackage(src.CacheDir, loaded.Digest, data)
	return loaded, nil
}

// resolveOCITag returns the tag or digest to fetch: the reference's own tag
// or digest, an exact version, or the highest tag a constraint matches.
func resolveOCITag(ctx context.Context, repository *remote.Repository, refTag, version string) (string, error) {
	if refTag != "" {
		if version != "" && !strings.HasPrefix(refTag, "sha256:") && tagToVersion(refTag) != version {
			return "", fmt.Errorf("the reference's tag %q and version %q disagree; set only one", refTag, version)
		}
		return refTag, nil
	}
	if version != "" {
		if _, err := semver.StrictNewVersion(version); err == nil {
			return versionToTag(version), nil
		}
	}
	constraintText := version
	if constraintText == "" {
		constraintText = "*"
	}
	constraint, err := semver.NewConstraint(constraintText)
	if err != nil {
		return "", fmt.Errorf("version %q is neither a version nor a constraint: %w", version, err)
	}
	var best *semver.Version
	var available []string
	err = repository.Tags(ctx, "", func(tags []string) error {
		for _, tag := range tags {
			v, err := semver.NewVersion(tagToVersion(tag))
			if err != nil {
				continue
			}
			available = append(available, v.Original())
			if constraint.Check(v) && (best == nil || v.GreaterThan(best)) {
				best = v
			}
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("list tags: %w", err)
	}
	if best == nil {
		sort.Strings(available)
		return "", fmt.Errorf("no tag matches version %q; available: %s", version, strings.Join(available, ", "))
	}
	return versionToTag(best.Original()), nil
}

// fetchChartLayer reads the manifest tag names and returns its chart layer.
func fetchChartLayer(ctx context.Context, repository *remote.Repository, tag string) (ocispec.Descriptor, error) {
	desc, body, err := repository.FetchReference(ctx, tag)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("fetch manifest: %w", err)
	}
	defer body.Close()
	if desc.Size > maxManifestBytes {
		return ocispec.Descriptor{}, fmt.Errorf("manifest of %d bytes is too large for a chart", desc.Size)
	}
	raw, err := content.ReadAll(body, desc)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("read manifest: %w", err)
	}
	var manifest ocispec.Manifest
	if err := json.Unmarshal(raw, &manifest); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("parse manifest: %w", err)
	}
	for _, layer := range manifest.Layers {
		if layer.MediaType == chartLayerMediaType || layer.MediaType == legacyChartLayerMediaType {
			return layer, nil
		}
	}
	return ocispec.Descriptor{}, errors.New("manifest has no Helm chart layer; is this a chart?")
}

// explainOCIError says what to do when the registry wants credentials that
// were not given, and tells certificate and protocol mismatches apart
// (*TLSError).
func explainOCIError(ctx context.Context, plainHTTP bool, registryHost string, err error) error {
	if errors.Is(err, auth.ErrBasicCredentialNotFound) {
		return fmt.Errorf("the registry requires credentials; set username and password: %w", err)
	}
	if plainHTTP {
		return classifyPlainHTTP(ctx, registryHost, err)
	}
	return classifyTLS(registryHost, err)
}

// OCI tags cannot hold '+', so Helm pushes version build metadata with '_'.
func versionToTag(version string) string { return strings.ReplaceAll(version, "+", "_") }
func tagToVersion(tag string) string     { return strings.ReplaceAll(tag, "_", "+") }
