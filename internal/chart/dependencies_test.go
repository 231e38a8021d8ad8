package chart

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

func TestLoad_missingDependencyNamesTheFix(t *testing.T) {
	dir := writeUmbrella(t, "  - name: lib\n    version: 0.1.0\n    repository: file://../lib\n", "")
	_, err := Load(context.Background(), Source{Chart: dir})
	if err == nil {
		t.Fatal("Load succeeded with a dependency missing from charts/")
	}
	mustContain(t, "error", err.Error(), "dependencies lib are listed in Chart.yaml but missing in charts/", "dependency_update = true", "helm dependency build")
}

// file://, HTTP repository and OCI dependencies are fetched, honouring Chart.lock.
func TestLoad_dependencyUpdate(t *testing.T) {
	repo := chartserver.NewHTTPRepository(t)
	web := chartserver.LoadFixture(t, "web")
	repo.Publish(t, web)
	newer := chartserver.LoadFixture(t, "web")
	newer.Metadata.Version = "1.1.0"
	repo.Publish(t, newer)
	registry := chartserver.NewOCIRegistry(t)
	registry.PublishFixture(t, "with-hooks")

	deps := "  - name: lib\n    version: 0.1.0\n    repository: file://../lib\n" +
		"  - name: web\n    version: ^1.0.0\n    repository: " + repo.URL + "\n" +
		"  - name: with-hooks\n    version: 0.1.0\n    repository: " + registry.Repository() + "\n"

	t.Run("without Chart.lock, the newest versions, and Chart.lock is written", func(t *testing.T) {
		dir := writeUmbrella(t, deps, "")
		l, err := Load(context.Background(), Source{Chart: dir, DependencyUpdate: true, PlainHTTP: true})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := dependencyVersions(l), []string{"lib@0.1.0", "web@1.1.0", "with-hooks@0.1.0"}; !reflect.DeepEqual(got, want) {
			t.Errorf("dependencies = %v, want %v", got, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "Chart.lock")); err != nil {
			t.Errorf("Chart.lock was not written: %v", err)
		}
		rendered := render(t, l, Values{}, RenderOptions{})
		mustContain(t, "manifest", rendered.Manifest, "name: web-lib", "app/charts/web/templates/")
	})

	t.Run("with Chart.lock, the locked versions", func(t *testing.T) {
		// Locked while 1.0.0 was the newest; 1.1.0 came out since.
		repo := chartserver.NewHTTPRepository(t)
		repo.Publish(t, web)
		deps := "  - name: lib\n    version: 0.1.0\n    repository: file://../lib\n" +
			"  - name: web\n    version: ^1.0.0\n    repository: " + repo.URL + "\n"
		first := writeUmbrella(t, deps, "")
		if _, err := Load(context.Background(), Source{Chart: first, DependencyUpdate: true}); err != nil {
			t.Fatal(err)
		}
		locked, err := os.ReadFile(filepath.Join(first, "Chart.lock"))
		if err != nil {
			t.Fatal(err)
		}
		repo.Publish(t, newer)
		dir := writeUmbrella(t, deps, string(locked))
		l, err := Load(context.Background(), Source{Chart: dir, DependencyUpdate: true})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := dependencyVersions(l), []string{"lib@0.1.0", "web@1.0.0"}; !reflect.DeepEqual(got, want) {
			t.Errorf("dependencies = %v, want %v", got, want)
		}
		// A second load finds charts/ current and fetches nothing.
		before := repo.Requests("/web-1.0.0.tgz")
		if _, err := Load(context.Background(), Source{Chart: dir, DependencyUpdate: true}); err != nil {
			t.Fatal(err)
		}
		if after := repo.Requests("/web-1.0.0.tgz"); after != before {
			t.Errorf("a second load downloaded web again (%d requests, then %d)", before, after)
		}
	})

	t.Run("a Chart.lock out of step with Chart.yaml is refused", func(t *testing.T) {
		dir := writeUmbrella(t, deps, "dependencies:\n- name: lib\n  repository: file://../lib\n  version: 0.1.0\ndigest: sha256:0000\ngenerated: \"2026-01-01T00:00:00Z\"\n")
		_, err := Load(context.Background(), Source{Chart: dir, DependencyUpdate: true})
		if err == nil {
			t.Fatal("Load succeeded with a stale Chart.lock")
		}
		mustContain(t, "error", err.Error(), "Chart.lock", "out of sync")
	})
}
