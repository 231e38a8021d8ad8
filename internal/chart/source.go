package chart

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v4/pkg/chart/common"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

// ociScheme prefixes chart references that live in an OCI registry.
const ociScheme = "oci://"

// Source says where a chart comes from. See the package documentation for
// the four kinds of source.
type Source struct {
	// Chart is a local chart directory, a packaged chart (.tgz), a chart
	// name in Repository, or an oci:// reference (optionally with a tag).
	Chart string
	// Repository is the URL of an HTTP(S) chart repository, or an oci://
	// registry path the chart name is appended to. Empty for local charts
	// and full oci:// references.
	Repository string
	// Version is an exact chart version or a semantic version constraint
	// that must resolve to one version. Empty means the latest stable
	// version for remote charts; for local charts it is checked when set.
	Version string
	// Username and Password authenticate to the repository or registry.
	Username, Password string
	// PlainHTTP talks to OCI registries over HTTP instead of HTTPS, like
	// helm's --plain-http; without it every registry, one on loopback too,
	// is reached over HTTPS. HTTP chart repositories use their URL's scheme.
	PlainHTTP bool
	// TLS is how repositories and registries, the chart's and those of the
	// dependencies DependencyUpdate fetches, are reached over HTTPS.
	TLS TLS
	// CacheDir, when set, keeps downloaded packages by digest so that a
	// second load of the same version does not download it again.
	CacheDir string
	// DependencyUpdate fetches the dependencies a chart directory's
	// Chart.yaml lists into its charts/ directory before loading it, as
	// helm dependency build does (see buildDependencies).
	DependencyUpdate bool
}

// Loaded is a chart ready to render, with what identifies its content.
type Loaded struct {
	Chart      *helmchart.Chart
	Version    string // the chart's exact version
	AppVersion string
	// Digest is "sha256:<hex>" of the package bytes (remote and .tgz
	// sources) or of the chart's files (directories).
	Digest string
}

// Load fetches and loads the chart src names. Errors say which source
// failed and why, and never contain src.Password.
func Load(ctx context.Context, src Source) (*Loaded, error) {
	if strings.TrimSpace(src.Chart) == "" {
		return nil, errors.New("chart is empty: set a chart directory, a .tgz package, a chart name with a repository, or an oci:// reference")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var (
		loaded *Loaded
		err    error
	)
	switch {
	case strings.HasPrefix(src.Chart, ociScheme):
		loaded, err = loadOCI(ctx, src, src.Chart)
	case strings.HasPrefix(src.Repository, ociScheme):
		loaded, err = loadOCI(ctx, src, strings.TrimSuffix(src.Repository, "/")+"/"+src.Chart)
	case src.Repository != "":
		loaded, err = loadFromRepository(ctx, src)
	default:
		loaded, err = loadLocal(ctx, src)
	}
	if err != nil {
		return nil, err
	}
	if err := checkInstallable(loaded.Chart); err != nil {
		return nil, fmt.Errorf("chart %s %s: %w", loaded.Chart.Name(), loaded.Version, err)
	}
	return loaded, nil
}

// loadLocal loads a chart directory or a packaged chart from disk.
func loadLocal(ctx context.Context, src Source) (*Loaded, error) {
	info, err := os.Stat(src.Chart)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("chart %q not found: no such directory or file; for a chart in a repository set repository as well", src.Chart)
		}
		return nil, fmt.Errorf("read chart %q: %w", src.Chart, err)
	}
	var loaded *Loaded
	if info.IsDir() {
		if src.DependencyUpdate {
			if err := buildDependencies(ctx, src.Chart, src.PlainHTTP, src.TLS); err != nil {
				return nil, err
			}
		}
		ch, err := loader.LoadDir(src.Chart)
		if err != nil {
			return nil, fmt.Errorf("load chart directory %q: %w", src.Chart, err)
		}
		loaded = newLoaded(ch, directoryDigest(ch))
	} else {
		data, err := os.ReadFile(src.Chart)
		if err != nil {
			return nil, fmt.Errorf("read chart %q: %w", src.Chart, err)
		}
		if loaded, err = loadArchive(data); err != nil {
			return nil, fmt.Errorf("load chart package %q: %w", src.Chart, err)
		}
	}
	if src.Version != "" {
		if err := checkVersion(loaded.Version, src.Version); err != nil {
			return nil, fmt.Errorf("chart %q: %w", src.Chart, err)
		}
	}
	return loaded, nil
}

// loadArchive loads a packaged chart and digests its bytes.
func loadArchive(data []byte) (*Loaded, error) {
	ch, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return newLoaded(ch, bytesDigest(data)), nil
}

func newLoaded(ch *helmchart.Chart, digest string) *Loaded {
	return &Loaded{
		Chart:      ch,
		Version:    ch.Metadata.Version,
		AppVersion: ch.Metadata.AppVersion,
		Digest:     digest,
	}
}

// checkVersion reports whether version satisfies want, an exact version or
// a constraint.
func checkVersion(version, want string) error {
	constraint, err := semver.NewConstraint(want)
	if err != nil {
		return fmt.Errorf("version %q is neither a version nor a constraint: %w", want, err)
	}
	v, err := semver.NewVersion(version)
	if err != nil {
		return fmt.Errorf("chart version %q is not a semantic version: %w", version, err)
	}
	if !constraint.Check(v) {
		return fmt.Errorf("chart has version %s, which does not match version %q", version, want)
	}
	return nil
}

// checkInstallable rejects what helm install would reject before rendering:
// library charts and dependencies listed in Chart.yaml but missing from
// charts/.
func checkInstallable(ch *helmchart.Chart) error {
	if ch.Metadata.Type != "" && ch.Metadata.Type != "application" {
		return fmt.Errorf("chart type %q is not installable; only application charts are", ch.Metadata.Type)
	}
	present := make(map[string]bool, len(ch.Dependencies()))
	for _, dep := range ch.Dependencies() {
		present[dep.Name()] = true
	}
	var missing []string
	for _, dep := range ch.Metadata.Dependencies {
		if !present[dep.Name] {
			missing = append(missing, dep.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("dependencies %s are listed in Chart.yaml but missing in charts/; set dependency_update = true to fetch them, or run helm dependency build in the chart's directory", strings.Join(missing, ", "))
	}
	return nil
}

// bytesDigest returns "sha256:<hex>" of data.
func bytesDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// directoryDigest hashes the files Helm loaded from a chart directory (its
// Raw files, subcharts under charts/ included, .helmignore applied), in name
// order, each as its length-prefixed name and content, so no two different
// sets of files share a digest.
func directoryDigest(ch *helmchart.Chart) string {
	files := append([]*common.File(nil), ch.Raw...)
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	h := sha256.New()
	var size [8]byte
	for _, f := range files {
		binary.BigEndian.PutUint64(size[:], uint64(len(f.Name)))
		h.Write(size[:])
		h.Write([]byte(f.Name))
		binary.BigEndian.PutUint64(size[:], uint64(len(f.Data)))
		h.Write(size[:])
		h.Write(f.Data)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
