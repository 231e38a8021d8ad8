package chart

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"text/template"

	"helm.sh/helm/v4/pkg/chart/common"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// benchmarkSizes are the object counts the generated fixture renders.
var benchmarkSizes = []int{10, 100, 1000}

func BenchmarkRender(b *testing.B) {
	l := loadFixtureB(b, "generated")
	for _, n := range benchmarkSizes {
		values := map[string]any{"count": n}
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				manifest.ForgetParsed() // as a new process renders them
				rendered, err := Render(context.Background(), l, values, RenderOptions{ReleaseName: "bench", Namespace: "review-x"})
				if err != nil {
					b.Fatal(err)
				}
				if len(rendered.Objects) != n {
					b.Fatalf("%d objects, want %d", len(rendered.Objects), n)
				}
			}
		})
	}
}

func BenchmarkManifests(b *testing.B) {
	l := loadFixtureB(b, "generated")
	sensitive := []string{"generated-secret-value", "another-sensitive-value"}
	eachRenderedSize(b, l, func(b *testing.B, n int, rendered *Rendered) {
		manifest.ForgetWritten() // as a new process writes them
		manifest.ForgetParsed()
		manifests, err := keyedManifests(rendered, "review-x", sensitive, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(manifests) != n {
			b.Fatalf("%d manifests, want %d", len(manifests), n)
		}
	})
}

// eachRenderedSize renders l at each of benchmarkSizes and runs op on the rendering as a
// sub-benchmark of that size.
func eachRenderedSize(b *testing.B, l *Loaded, op func(b *testing.B, n int, rendered *Rendered)) {
	for _, n := range benchmarkSizes {
		rendered, err := Render(context.Background(), l, map[string]any{"count": n}, RenderOptions{ReleaseName: "bench", Namespace: "review-x"})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				op(b, n, rendered)
			}
		})
	}
}

func loadFixtureB(b *testing.B, name string) *Loaded {
	b.Helper()
	loaded, err := Load(context.Background(), Source{Chart: fixturePath(name)})
	if err != nil {
		b.Fatal(err)
	}
	return loaded
}

// BenchmarkPlanRendering renders and redacts as a release's plan does (RenderStable, then
// RedactStable) and reports how many times Helm's engine ran per plan: twice for the stable
// rendering, and once per substitution round when there are sensitive values.
func BenchmarkPlanRendering(b *testing.B) {
	l := loadFixtureB(b, "generated")
	o := RenderOptions{ReleaseName: "bench", Namespace: "review-x"}
	for _, sensitive := range []bool{false, true} {
		for _, n := range benchmarkSizes {
			v := Values{Set: map[string]string{"count": fmt.Sprint(n)}}
			if sensitive {
				v.SetSensitive = map[string]string{"secretValue": "s3cret&value-of-the-bench"}
			}
			b.Run(fmt.Sprintf("sensitive=%t/objects=%d", sensitive, n), func(b *testing.B) {
				b.ReportAllocs()
				renders := countRenders(b)
				plans := 0
				for b.Loop() {
					manifest.ForgetWritten() // as a new process writes them
					manifest.ForgetParsed()
					planRendering(b, l, v, o, n)
					plans++
				}
				b.ReportMetric(float64(renders.Load())/float64(plans), "renders/op")
			})
		}
	}
}

// BenchmarkPlanRendering_recordedThenNext is what a one-change plan renders in one process: the
// recorded revision, then the next, one object more.
func BenchmarkPlanRendering_recordedThenNext(b *testing.B) {
	l := loadFixtureB(b, "generated")
	o := RenderOptions{ReleaseName: "bench", Namespace: "review-x"}
	for _, n := range benchmarkSizes {
		recorded := Values{Set: map[string]string{"count": fmt.Sprint(n)}}
		next := Values{Set: map[string]string{"count": fmt.Sprint(n + 1)}}
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				manifest.ForgetWritten() // as a new process renders them
				manifest.ForgetParsed()
				planRendering(b, l, recorded, o, n)
				planRendering(b, l, next, o, n+1)
			}
		})
	}
}

// planRendering is what a plan renders and redacts.
func planRendering(b testing.TB, l *Loaded, v Values, o RenderOptions, objects int) {
	values, err := MergeValues(v)
	if err != nil {
		b.Fatal(err)
	}
	rendered, err := RenderStable(context.Background(), l, values, o, Prior{})
	if err != nil {
		b.Fatal(err)
	}
	redacted, err := RedactStable(context.Background(), l, v, o, rendered, RedactionOptions{Namespace: o.Namespace})
	if err != nil {
		b.Fatal(err)
	}
	if len(redacted.Manifests) != objects {
		b.Fatalf("%d manifests, want %d", len(redacted.Manifests), objects)
	}
}

// countRenders counts the runs of Helm's engine until the benchmark ends.
func countRenders(b testing.TB) *atomic.Int64 {
	b.Helper()
	var renders atomic.Int64
	engine := runEngine
	runEngine = func(ctx context.Context, ch *helmchart.Chart, values common.Values, funcs template.FuncMap) (map[string]string, error) {
		renders.Add(1)
		return engine(ctx, ch, values, funcs)
	}
	b.Cleanup(func() { runEngine = engine })
	return &renders
}

// A plan runs Helm's engine twice for the stable rendering of a chart that draws, once for one
// that does not, and once per substitution round, never more: the redaction compares with the
// stable rendering rather than rendering it again.
func TestPlanRendering_rendersTwicePlusOncePerRound(t *testing.T) {
	o := RenderOptions{ReleaseName: "web", Namespace: "review-x"}
	for _, c := range []struct {
		fixture string
		objects int
		stable  int
	}{
		{"generated", 10, 1},
		{"random", 2, 2},
	} {
		l := loadFixture(t, c.fixture)
		for sensitive, want := range map[bool]int{false: c.stable, true: c.stable + substitutionRounds} {
			v := Values{}
			if sensitive {
				v.SetSensitive = map[string]string{"secretValue": "s3cret&value"}
			}
			renders := countRenders(t)
			planRendering(t, l, v, o, c.objects)
			if got := renders.Load(); got != int64(want) {
				t.Errorf("%s with sensitive values %t: %d renderings, want %d", c.fixture, sensitive, got, want)
			}
		}
	}
}

// BenchmarkNoPlaceholderLeft is the last check of a rendering of a chart that draws, over every
// string of its objects.
func BenchmarkNoPlaceholderLeft(b *testing.B) {
	eachRenderedSize(b, loadFixtureB(b, "generated"), func(b *testing.B, _ int, rendered *Rendered) {
		if err := noPlaceholderLeft(rendered.Objects); err != nil {
			b.Fatal(err)
		}
	})
}
