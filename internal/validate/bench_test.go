package validate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
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

// BenchmarkServerSchema reads an OpenAPI v3 document of 300 kinds (about 1.7 MB, as api/v1's is
// 1.6 MB) and checks objects of 4 of them, as a plan does once per process and document.
func BenchmarkServerSchema(b *testing.B) {
	definitions := map[string]any{
		"meta.ObjectMeta": map[string]any{"type": "object", "properties": map[string]any{
			"name": map[string]any{"type": "string"}, "labels": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}}},
	}
	ref := func(name string) map[string]any {
		return map[string]any{"allOf": []any{map[string]any{"$ref": "#/components/schemas/" + name}}}
	}
	for i := range 300 {
		kind := fmt.Sprintf("Kind%03d", i)
		fields := map[string]any{}
		for f := range 40 {
			fields[fmt.Sprintf("field%02d", f)] = map[string]any{"type": "string", "description": strings.Repeat("what the field does. ", 4)}
		}
		definitions["test."+kind+"Spec"] = map[string]any{"type": "object", "properties": fields}
		definitions["test."+kind] = map[string]any{"type": "object",
			"properties":                      map[string]any{"apiVersion": map[string]any{"type": "string"}, "kind": map[string]any{"type": "string"}, "metadata": ref("meta.ObjectMeta"), "spec": ref("test." + kind + "Spec")},
			"x-kubernetes-group-version-kind": []any{map[string]any{"group": "", "version": "v1", "kind": kind}}}
	}
	doc, err := json.Marshal(map[string]any{"openapi": "3.0.0", "components": map[string]any{"schemas": definitions}})
	if err != nil {
		b.Fatal(err)
	}
	var objects []string
	for _, kind := range []string{"Kind001", "Kind100", "Kind200", "Kind299"} {
		objects = append(objects, "apiVersion: v1\nkind: "+kind+"\nmetadata: {name: a, labels: {app: a}}\nspec: {field01: x, field39: z}\n")
	}
	objs := objectsOf(b, strings.Join(objects, "---\n"))
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		server, err := ParseServerSchema(doc)
		if err != nil {
			b.Fatal(err)
		}
		findings := Check(objs, Options{Server: map[schema.GroupVersion]*ServerSchema{{Version: "v1"}: server}})
		if len(findings) > 0 {
			b.Fatal(findings)
		}
	}
}
