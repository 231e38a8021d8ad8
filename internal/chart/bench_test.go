package chart

import (
	"context"
	"fmt"
	"testing"
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
	for _, n := range benchmarkSizes {
		rendered, err := Render(context.Background(), l, map[string]any{"count": n}, RenderOptions{ReleaseName: "bench", Namespace: "review-x"})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				manifests, err := Manifests(rendered, "review-x", sensitive, nil)
				if err != nil {
					b.Fatal(err)
				}
				if len(manifests) != n {
					b.Fatalf("%d manifests, want %d", len(manifests), n)
				}
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
