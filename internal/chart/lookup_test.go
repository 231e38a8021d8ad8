package chart

import (
	"testing"
	"text/template"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// secretsProvider answers lookups of Secrets from a fake cluster holding them.
type secretsProvider struct{ client dynamic.Interface }

func (p secretsProvider) GetClientFor(_, _ string) (dynamic.NamespaceableResourceInterface, bool, error) {
	return p.client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}), true, nil
}

func TestRender_lookupAnsweredBesideFuncs(t *testing.T) {
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": "review-x"},
		"data":     map[string]any{"password": "c2VjcmV0"},
	}}
	scheme := runtime.NewScheme()
	listKinds := map[schema.GroupVersionResource]string{{Version: "v1", Resource: "secrets"}: "SecretList"}
	provider := secretsProvider{client: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, listKinds, secret)}
	l := inMemoryChart("lookup", map[string]string{
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lookup\ndata:\n" +
			"  found: {{ (lookup \"v1\" \"Secret\" \"review-x\" \"db\").data.password | quote }}\n" +
			"  missing: {{ len (lookup \"v1\" \"Secret\" \"review-x\" \"nope\") | quote }}\n" +
			"  listed: {{ len (lookup \"v1\" \"Secret\" \"review-x\" \"\").items | quote }}\n" +
			"  token: {{ randAlphaNum 4 | quote }}\n",
	})
	o := RenderOptions{
		ReleaseName: "web", Namespace: "review-x", Lookup: provider,
		Funcs: template.FuncMap{"randAlphaNum": func(n int) string { return "seed" }},
	}
	rendered := render(t, l, Values{}, o)
	want := map[string]any{"found": "c2VjcmV0", "missing": "0", "listed": "1", "token": "seed"}
	for key, value := range want {
		if got := nested(rendered.Objects[0], "data", key); got != value {
			t.Errorf("data.%s = %v, want %v", key, got, value)
		}
	}
}
