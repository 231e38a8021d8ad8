package validate

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkCheck checks 100 objects of the kinds charts commonly hold, once the schemas are
// loaded (each provider process loads them once, on first use).
func BenchmarkCheck(b *testing.B) {
	base := fixture(b, "valid.yaml")
	var docs []string
	for i := range 13 {
		docs = append(docs, strings.ReplaceAll(base, "name: web", fmt.Sprintf("name: web-%d", i)))
	}
	objs := objectsOf(b, strings.Join(docs, "\n---\n"))[:100]
	target := Version{Major: 1, Minor: 37}
	Check(objs[:1], Options{Target: target})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if findings := Check(objs, Options{Target: target}); len(findings) > 0 {
			b.Fatal(findings)
		}
	}
}

// BenchmarkCheck_customResources checks 100 custom resources against a CRD of the same set.
func BenchmarkCheck_customResources(b *testing.B) {
	docs := []string{fixture(b, "crd.yaml")}
	for i := range 100 {
		docs = append(docs, fmt.Sprintf("apiVersion: checks.gitlabk8s.io/v1\nkind: Widget\nmetadata: {name: w%d}\nspec: {size: 3, color: red}\n", i))
	}
	objs := objectsOf(b, strings.Join(docs, "\n---\n"))
	b.ReportAllocs()
	for b.Loop() {
		if findings := Check(objs, Options{Target: Version{Major: 1, Minor: 37}}); len(findings) > 0 {
			b.Fatal(findings)
		}
	}
}
