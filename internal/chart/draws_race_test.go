package chart

import (
	"context"
	"sync"
	"testing"
)

// Two releases of one loaded chart render at once (one provider serves every resource of a
// configuration in parallel); under -race this shows any state the renderings share.
func TestRenderStable_concurrentRenderingsOfOneChart(t *testing.T) {
	l := loadFixture(t, "drawn")
	var wg sync.WaitGroup
	results := make([]*Rendered, 4)
	errs := make([]error, len(results))
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = RenderStable(context.Background(), l, map[string]any{"host": "h.example.test"},
				RenderOptions{ReleaseName: "web", Namespace: "review-x", Seed: testSeed, Lookup: newFakeCluster()}, Prior{})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("rendering %d: %v", i, err)
		}
	}
	// Values drawn from the seed are drawn alike by every rendering.
	first := nested(objectsByName(results[0])["ConfigMap/web-config"], "data", "app.ini")
	for i, r := range results[1:] {
		if got := nested(objectsByName(r)["ConfigMap/web-config"], "data", "app.ini"); got != first {
			t.Errorf("rendering %d drew %v, rendering 0 drew %v", i+1, got, first)
		}
	}
}
