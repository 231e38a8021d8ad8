package chart

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

func TestLoad_directory(t *testing.T) {
	first := loadFixture(t, "web")
	if first.Version != "1.0.0" || first.AppVersion != "1.25.0" || first.Chart.Name() != "web" {
		t.Errorf("loaded %s %s (app %s)", first.Chart.Name(), first.Version, first.AppVersion)
	}
	if !strings.HasPrefix(first.Digest, "sha256:") || len(first.Digest) != len("sha256:")+64 {
		t.Errorf("digest = %q", first.Digest)
	}
	if again := loadFixture(t, "web"); again.Digest != first.Digest {
		t.Errorf("digest changed between two loads: %s, %s", first.Digest, again.Digest)
	}

	dir := copyDir(t, chartserver.FixtureChart("web"))
	copied, err := Load(context.Background(), Source{Chart: dir})
	if err != nil {
		t.Fatal(err)
	}
	if copied.Digest != first.Digest {
		t.Errorf("the same files in another directory have another digest")
	}
	if err := os.WriteFile(filepath.Join(dir, "web.orig"), []byte("ignored"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ignored, err := Load(context.Background(), Source{Chart: dir}); err != nil || ignored.Digest != first.Digest {
		t.Errorf("a file .helmignore excludes changed the digest (%v)", err)
	}
	appendFile(t, filepath.Join(dir, "templates", "configmap.yaml"), "\n# changed\n")
	changed, err := Load(context.Background(), Source{Chart: dir})
	if err != nil {
		t.Fatal(err)
	}
	if changed.Digest == first.Digest {
		t.Error("a changed template did not change the digest")
	}
}

func TestLoad_archive(t *testing.T) {
	path := chartserver.Package(t, chartserver.LoadFixture(t, "web"), t.TempDir())
	loaded, err := Load(context.Background(), Source{Chart: path, Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if want := "sha256:" + hex.EncodeToString(sum[:]); loaded.Digest != want {
		t.Errorf("digest = %s, want the archive's %s", loaded.Digest, want)
	}
	if loaded.Version != "1.0.0" || len(loaded.Chart.Templates) == 0 {
		t.Errorf("loaded %s with %d templates", loaded.Version, len(loaded.Chart.Templates))
	}
}

func TestLoad_localErrors(t *testing.T) {
	tests := []struct {
		name string
		src  Source
		want []string
	}{
		{"empty", Source{}, []string{"chart is empty"}},
		{"missing", Source{Chart: filepath.Join(t.TempDir(), "nope")}, []string{"not found", "repository"}},
		{"not a chart", Source{Chart: t.TempDir()}, []string{"load chart directory", "Chart.yaml"}},
		{"version mismatch", Source{Chart: chartserver.FixtureChart("web"), Version: "2.0.0"}, []string{"has version 1.0.0", `"2.0.0"`}},
		{"bad constraint", Source{Chart: chartserver.FixtureChart("web"), Version: "not a version"}, []string{"neither a version nor a constraint"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(context.Background(), tt.src)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
	if _, err := Load(context.Background(), Source{Chart: chartserver.FixtureChart("web"), Version: "^1.0"}); err != nil {
		t.Errorf("a matching constraint: %v", err)
	}
}

func TestLoad_libraryChartIsNotInstallable(t *testing.T) {
	ch := chartserver.LoadFixture(t, "web")
	ch.Metadata.Type = "library"
	ch.Templates = nil
	path := chartserver.Package(t, ch, t.TempDir())
	if _, err := Load(context.Background(), Source{Chart: path}); err == nil || !strings.Contains(err.Error(), "not installable") {
		t.Errorf("library chart: %v", err)
	}
}

func TestLoad_httpRepository(t *testing.T) {
	repository := chartserver.NewHTTPRepository(t)
	v1 := repository.PublishFixture(t, "web")
	v11 := chartserver.LoadFixture(t, "web")
	v11.Metadata.Version = "1.1.0"
	digest11 := repository.Publish(t, v11)
	pre := chartserver.LoadFixture(t, "web")
	pre.Metadata.Version = "2.0.0-rc.1"
	repository.Publish(t, pre)

	tests := []struct {
		version, wantVersion, wantDigest string
	}{
		{"1.0.0", "1.0.0", v1},
		{"~1.0", "1.0.0", v1},
		{"^1", "1.1.0", digest11},
		{"", "1.1.0", digest11},
		{"2.0.0-rc.1", "2.0.0-rc.1", ""},
	}
	for _, tt := range tests {
		loaded, err := Load(context.Background(), Source{Chart: "web", Repository: repository.URL + "/", Version: tt.version})
		if err != nil {
			t.Errorf("version %q: %v", tt.version, err)
			continue
		}
		if loaded.Version != tt.wantVersion {
			t.Errorf("version %q resolved to %s, want %s", tt.version, loaded.Version, tt.wantVersion)
		}
		if tt.wantDigest != "" && loaded.Digest != tt.wantDigest {
			t.Errorf("version %q: digest %s, want %s", tt.version, loaded.Digest, tt.wantDigest)
		}
	}

	_, err := Load(context.Background(), Source{Chart: "web", Repository: repository.URL, Version: "9.9.9"})
	if err == nil || !strings.Contains(err.Error(), `no version matching "9.9.9"`) || !strings.Contains(err.Error(), "1.1.0, 1.0.0") {
		t.Errorf("missing version: %v", err)
	}
	_, err = Load(context.Background(), Source{Chart: "nope", Repository: repository.URL, Version: "1.0.0"})
	if err == nil || !strings.Contains(err.Error(), `chart "nope" not found in index.yaml`) {
		t.Errorf("missing chart: %v", err)
	}
}

func TestLoad_httpRepositoryRepublishedVersionChangesDigest(t *testing.T) {
	repository := chartserver.NewHTTPRepository(t)
	repository.PublishFixture(t, "web")
	src := Source{Chart: "web", Repository: repository.URL, Version: "1.0.0"}
	before, err := Load(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	republished := chartserver.LoadFixture(t, "web")
	chartserver.SetTemplate(republished, "templates/extra.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n")
	repository.Publish(t, republished)
	after, err := Load(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if after.Version != before.Version || after.Digest == before.Digest {
		t.Errorf("republished %s: digest %s, before %s", after.Version, after.Digest, before.Digest)
	}
}

func TestLoad_httpRepositoryCache(t *testing.T) {
	repository := chartserver.NewHTTPRepository(t)
	digest := repository.PublishFixture(t, "web")
	src := Source{Chart: "web", Repository: repository.URL, Version: "1.0.0", CacheDir: t.TempDir()}
	for range 2 {
		loaded, err := Load(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		if loaded.Digest != digest {
			t.Errorf("digest %s, want %s", loaded.Digest, digest)
		}
	}
	if got := repository.Requests("/web-1.0.0.tgz"); got != 1 {
		t.Errorf("package downloaded %d times, want once", got)
	}
	if got := repository.Requests("/index.yaml"); got != 2 {
		t.Errorf("index read %d times, want every time (versions resolve afresh)", got)
	}
}

func TestLoad_httpRepositoryAuthentication(t *testing.T) {
	const password = "repo-pa55word-canary"
	repository := chartserver.NewHTTPRepository(t, chartserver.WithBasicAuth("deployer", password))
	repository.PublishFixture(t, "web")

	if _, err := Load(context.Background(), Source{Chart: "web", Repository: repository.URL, Version: "1.0.0", Username: "deployer", Password: password}); err != nil {
		t.Errorf("with credentials: %v", err)
	}
	_, err := Load(context.Background(), Source{Chart: "web", Repository: repository.URL, Version: "1.0.0", Username: "deployer", Password: "wrong-" + password})
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("wrong password: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), password) {
		t.Errorf("error %q contains the password", err)
	}
}

func TestLoad_httpRepositoryErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Load(ctx, Source{Chart: "web", Repository: "ftp://example"}); err == nil || !strings.Contains(err.Error(), "not an http(s):// or oci:// URL") {
		t.Errorf("ftp repository: %v", err)
	}
	notARepository := chartserver.NewHTTPRepository(t)
	if _, err := Load(ctx, Source{Chart: "web", Repository: notARepository.URL + "/sub"}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("no index: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Load(cancelled, Source{Chart: "web", Repository: notARepository.URL}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestLoad_ociRegistry(t *testing.T) {
	registry := chartserver.NewOCIRegistry(t)
	ref, v1 := registry.PublishFixture(t, "web")
	v11 := chartserver.LoadFixture(t, "web")
	v11.Metadata.Version = "1.1.0+build.7"
	_, digest11 := registry.Publish(t, v11)

	tests := []struct {
		name                    string
		src                     Source
		wantVersion, wantDigest string
	}{
		{"exact version", Source{Chart: ref, Version: "1.0.0"}, "1.0.0", v1},
		{"tag in the reference", Source{Chart: ref + ":1.0.0"}, "1.0.0", v1},
		{"constraint", Source{Chart: ref, Version: "~1.0"}, "1.0.0", v1},
		{"latest", Source{Chart: ref}, "1.1.0+build.7", digest11},
		{"build metadata", Source{Chart: ref, Version: "1.1.0+build.7"}, "1.1.0+build.7", digest11},
		{"repository and name", Source{Chart: "web", Repository: registry.Repository(), Version: "1.0.0"}, "1.0.0", v1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.src.PlainHTTP = true
			loaded, err := Load(context.Background(), tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if loaded.Version != tt.wantVersion || loaded.Digest != tt.wantDigest {
				t.Errorf("loaded %s %s, want %s %s", loaded.Version, loaded.Digest, tt.wantVersion, tt.wantDigest)
			}
		})
	}

	// Without PlainHTTP, a registry on loopback is reached over HTTPS too, and says it speaks HTTP.
	_, err := Load(context.Background(), Source{Chart: ref, Version: "1.0.0"})
	if kind := tlsErrorKind(err); kind != ServerSpeaksHTTP {
		t.Errorf("plain-HTTP registry without PlainHTTP: kind %d, error %v", kind, err)
	}

	_, err = Load(context.Background(), Source{Chart: ref, Version: "9.9.9", PlainHTTP: true})
	if err == nil || !strings.Contains(err.Error(), "9.9.9") {
		t.Errorf("missing version: %v", err)
	}
	_, err = Load(context.Background(), Source{Chart: ref, Version: ">=5", PlainHTTP: true})
	if err == nil || !strings.Contains(err.Error(), `no tag matches version ">=5"`) {
		t.Errorf("unmatched constraint: %v", err)
	}
	_, err = Load(context.Background(), Source{Chart: ref + ":1.0.0", Version: "1.1.0", PlainHTTP: true})
	if err == nil || !strings.Contains(err.Error(), "disagree") {
		t.Errorf("tag and version: %v", err)
	}
}

func TestLoad_ociRegistryRepublishedVersionChangesDigest(t *testing.T) {
	registry := chartserver.NewOCIRegistry(t)
	ref, before := registry.PublishFixture(t, "web")
	republished := chartserver.LoadFixture(t, "web")
	chartserver.SetTemplate(republished, "templates/extra.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n")
	_, after := registry.Publish(t, republished)
	if before == after {
		t.Fatal("the fixture did not change the package")
	}
	loaded, err := Load(context.Background(), Source{Chart: ref, Version: "1.0.0", PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Digest != after {
		t.Errorf("digest %s, want the republished %s", loaded.Digest, after)
	}
}

func TestLoad_ociRegistryAuthentication(t *testing.T) {
	const password = "oci-pa55word-canary"
	registry := chartserver.NewOCIRegistry(t, chartserver.WithBasicAuth("deployer", password))
	ref, digest := registry.PublishFixture(t, "web")

	loaded, err := Load(context.Background(), Source{Chart: ref, Version: "1.0.0", PlainHTTP: true, Username: "deployer", Password: password})
	if err != nil {
		t.Fatalf("with credentials: %v", err)
	}
	if loaded.Digest != digest {
		t.Errorf("digest %s, want %s", loaded.Digest, digest)
	}
	_, err = Load(context.Background(), Source{Chart: ref, Version: "1.0.0", PlainHTTP: true})
	if err == nil || !strings.Contains(err.Error(), "requires credentials") {
		t.Errorf("without credentials: %v", err)
	}
	_, err = Load(context.Background(), Source{Chart: ref, Version: "1.0.0", PlainHTTP: true, Username: "deployer", Password: "wrong-" + password})
	if err == nil {
		t.Error("wrong password loaded the chart")
	} else if strings.Contains(err.Error(), password) {
		t.Errorf("error %q contains the password", err)
	}
}

// TestLoad_sameChartSameDigestEverywhere shows the digest is the package's:
// one package has one digest as a file, in an HTTP repository and in an
// OCI registry.
func TestLoad_sameChartSameDigestEverywhere(t *testing.T) {
	archive := chartserver.Package(t, chartserver.LoadFixture(t, "web"), t.TempDir())
	repository := chartserver.NewHTTPRepository(t)
	repository.PublishArchive(t, archive)
	registry := chartserver.NewOCIRegistry(t)
	ref, _ := registry.PublishArchive(t, archive)

	var digests []string
	for _, src := range []Source{
		{Chart: archive},
		{Chart: "web", Repository: repository.URL, Version: "1.0.0"},
		{Chart: ref, Version: "1.0.0", PlainHTTP: true},
	} {
		loaded, err := Load(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, loaded.Digest)
	}
	if digests[0] != digests[1] || digests[0] != digests[2] {
		t.Errorf("digests differ: file %s, repository %s, registry %s", digests[0], digests[1], digests[2])
	}
}

func TestLoad_httpRepositoryPackageNotMatchingIndex(t *testing.T) {
	repository := chartserver.NewHTTPRepository(t)
	repository.PublishFixture(t, "web")
	other := chartserver.LoadFixture(t, "web")
	chartserver.SetTemplate(other, "templates/extra.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n")
	data, err := os.ReadFile(chartserver.Package(t, other, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	repository.ReplaceWithoutReindex(t, "web-1.0.0.tgz", data)
	_, err = Load(context.Background(), Source{Chart: "web", Repository: repository.URL, Version: "1.0.0"})
	if err == nil || !strings.Contains(err.Error(), "differs from") {
		t.Errorf("tampered package: %v", err)
	}
}

func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}
