package chart

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	helmchart "helm.sh/helm/v4/pkg/chart/v2"
)

// onCores runs fn with GOMAXPROCS set to n, so work split per core runs in n ranges.
func onCores(t *testing.T, n int, fn func()) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
	fn()
}

func TestRender_sameOnEveryCoreCount(t *testing.T) {
	l := loadFixture(t, "generated")
	o := RenderOptions{ReleaseName: "cores", Namespace: "review-x"}
	var one, four *Rendered
	var errOne, errFour error
	onCores(t, 1, func() { one, errOne = Render(context.Background(), l, map[string]any{"count": 200}, o) })
	onCores(t, 4, func() { four, errFour = Render(context.Background(), l, map[string]any{"count": 200}, o) })
	if errOne != nil || errFour != nil {
		t.Fatalf("errors %v, %v", errOne, errFour)
	}
	if len(one.Objects) != 200 {
		t.Fatalf("%d objects, want 200", len(one.Objects))
	}
	if !reflect.DeepEqual(one.Objects, four.Objects) || !reflect.DeepEqual(one.ObjectSources, four.ObjectSources) || one.Manifest != four.Manifest {
		t.Errorf("on 4 cores the objects, their sources or the manifest differ from one core's")
	}
}

func TestFromFiles_theFirstTemplateHelmAcceptsButNoObjectIsNamedOnEveryCoreCount(t *testing.T) {
	files := map[string]string{}
	for i := range 100 {
		name := fmt.Sprintf("c%03d", i)
		if i == 40 || i == 80 {
			// Helm sorts a document without a name; it is no Kubernetes object.
			name = ""
		}
		files[fmt.Sprintf("app/templates/c%03d.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %q\n", name)
	}
	ch := &helmchart.Chart{Metadata: &helmchart.Metadata{Name: "app"}}
	for _, cores := range []int{1, 2, 4} {
		var err error
		onCores(t, cores, func() { _, err = fromFiles(ch, files) })
		if err == nil || !strings.Contains(err.Error(), "app/templates/c040.yaml") {
			t.Errorf("%d cores: error %v, want it to name app/templates/c040.yaml, the first template in Helm's order with no object", cores, err)
		}
	}
}
