package chartserver

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
)

// FixtureChart returns the absolute path of testdata/charts/<name> at the
// root of the repository: web, with-hooks, with-crds, random, broken,
// lookup or generated.
func FixtureChart(name string) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("chartserver: cannot locate the source file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "charts", name)
}

// LoadFixture loads the fixture chart name, for a test to change before
// publishing it (another version, a changed template).
func LoadFixture(t testing.TB, name string) *helmchart.Chart {
	t.Helper()
	ch, err := loader.LoadDir(FixtureChart(name))
	if err != nil {
		t.Fatalf("load fixture chart %s: %v", name, err)
	}
	return ch
}

// Package writes ch as helm package does, to <dir>/<name>-<version>.tgz,
// and returns the archive's path.
func Package(t testing.TB, ch *helmchart.Chart, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("package chart %s: %v", ch.Name(), err)
	}
	path, err := chartutil.Save(ch, dir)
	if err != nil {
		t.Fatalf("package chart %s: %v", ch.Name(), err)
	}
	return path
}

// SetTemplate replaces (or adds) the template file name ("templates/x.yaml")
// of ch, to publish a changed chart under the same version.
func SetTemplate(ch *helmchart.Chart, name, content string) {
	for _, f := range ch.Templates {
		if f.Name == name {
			f.Data = []byte(content)
			return
		}
	}
	ch.Templates = append(ch.Templates, &common.File{Name: name, Data: []byte(content)})
}
