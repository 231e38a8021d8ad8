package kube

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// clientGoListDecoder is the decoder the dynamic client's List decodes a JSON answer with.
func clientGoListDecoder(t testing.TB) runtime.Decoder {
	t.Helper()
	ns := dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer
	info, ok := runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), "application/json")
	if !ok {
		t.Fatal("the dynamic client has no JSON serializer")
	}
	return ns.DecoderToVersion(info.Serializer, nil)
}

// clientGoItems decodes body as the dynamic client's List does.
func clientGoItems(dec runtime.Decoder, body []byte) ([]unstructured.Unstructured, error) {
	var list unstructured.UnstructuredList
	if _, _, err := dec.Decode(body, nil, &list); err != nil {
		return nil, err
	}
	return list.Items, nil
}

var listBodies = map[string]string{
	"built-in kind, items without kind": `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},
		"items":[{"metadata":{"name":"a","namespace":"n"},"data":{"k":"v"}},{"metadata":{"name":"b"}}]}`,
	"group kind": `{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{},
		"items":[{"metadata":{"name":"d"},"spec":{"replicas":3,"template":{"spec":{"terminationGracePeriodSeconds":30}}}}]}`,
	"custom resources, items with kind": `{"apiVersion":"example.com/v1","kind":"WidgetList","metadata":{"continue":""},
		"items":[{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1.5}}]}`,
	"item with only a kind":        `{"kind":"XList","apiVersion":"v1","items":[{"kind":"Y","metadata":{"name":"y"}}]}`,
	"item with only an apiVersion": `{"kind":"XList","apiVersion":"v1","items":[{"apiVersion":"v2","metadata":{"name":"y"}}]}`,
	"numbers": `{"kind":"XList","apiVersion":"v1","items":[{"n":[0,-1,1.0,1e3,1.5e300,9223372036854775807,
		9223372036854775808,-9223372036854775808,0.1,1e-7,12345678901234567890123]}]}`,
	"null item":           `{"kind":"ConfigMapList","apiVersion":"v1","items":[null,{"metadata":{"name":"a"}}]}`,
	"no items":            `{"kind":"ConfigMapList","apiVersion":"v1","items":[]}`,
	"null items":          `{"kind":"ConfigMapList","apiVersion":"v1","items":null}`,
	"items left out":      `{"kind":"ConfigMapList","apiVersion":"v1"}`,
	"kind without List":   `{"kind":"Table","apiVersion":"v1","items":[{}]}`,
	"unicode and escapes": `{"kind":"ConfigMapList","apiVersion":"v1","items":[{"data":{"k":"\u00e9\ud83d\ude00\\n\"","\u00fc":"x"}}]}`,
	"duplicate keys":      `{"kind":"ConfigMapList","apiVersion":"v1","items":[{"data":{"k":"1","k":"2"}}]}`,
	// Refused by both.
	"apiVersion not a string": `{"kind":"ConfigMapList","apiVersion":1,"items":[{"metadata":{"name":"a"}}]}`,
	"kind not a string":       `{"kind":["ConfigMapList"],"apiVersion":"v1","items":[]}`,
	"no kind":                 `{"apiVersion":"v1","items":[{"metadata":{"name":"a"}}]}`,
	"kind empty":              `{"kind":"","apiVersion":"v1","items":[]}`,
	"item not an object":      `{"kind":"ConfigMapList","apiVersion":"v1","items":[1]}`,
	"items not an array":      `{"kind":"ConfigMapList","apiVersion":"v1","items":{}}`,
	"not JSON":                `kind: ConfigMapList`,
	"truncated":               `{"kind":"ConfigMapList","apiVersion":"v1","items":[{"metadata":`,
	"trailing data":           `{"kind":"ConfigMapList","apiVersion":"v1","items":[]} {}`,
	"a list, not an object":   `[]`,
}

func TestDecodeList_isWhatTheDynamicClientDecodes(t *testing.T) {
	dec := clientGoListDecoder(t)
	refused := 0
	for name, body := range listBodies {
		t.Run(name, func(t *testing.T) {
			want, wantErr := clientGoItems(dec, []byte(body))
			got, err := decodeList([]byte(body))
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("error %v, client-go's %v", err, wantErr)
			}
			if wantErr != nil {
				refused++
				return
			}
			if len(got) != len(want) {
				t.Fatalf("%d items, client-go's %d", len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i].Object, want[i].Object) {
					t.Errorf("item %d:\n got %#v\nwant %#v", i, got[i].Object, want[i].Object)
				}
			}
		})
	}
	if refused != 10 {
		t.Errorf("client-go refused %d of the bodies, the table expects 10", refused)
	}
}

func FuzzDecodeList(f *testing.F) {
	for _, body := range listBodies {
		f.Add([]byte(body))
	}
	dec := clientGoListDecoder(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		want, wantErr := clientGoItems(dec, body)
		got, err := decodeList(body)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("error %v, client-go's %v", err, wantErr)
		}
		if len(got) != len(want) {
			t.Fatalf("%d items, client-go's %d", len(got), len(want))
		}
		for i := range want {
			if !reflect.DeepEqual(got[i].Object, want[i].Object) {
				t.Fatalf("item %d:\n got %#v\nwant %#v", i, got[i].Object, want[i].Object)
			}
		}
	})
}

// TestLister_isTheDynamicClientsList lists objects of the local cluster both ways: the same
// objects, in the same order, and the same errors.
func TestLister_isTheDynamicClientsList(t *testing.T) {
	ctx, admin := adminClients(t)
	cfg := admin.Config
	dc, lister, err := newDynamic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns := fmt.Sprintf("kube-lister-%04x", rand.IntN(1<<16))
	nsRes := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	cmRes := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	if _, err := dc.Resource(nsRes).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dc.Resource(nsRes).Delete(ctx, ns, metav1.DeleteOptions{}) })
	// The controller manager adds the namespace's kube-root-ca.crt ConfigMap when it gets to it:
	// wait for it, so that both lists see the same ConfigMaps.
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := dc.Resource(cmRes).Namespace(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the namespace's kube-root-ca.crt ConfigMap did not appear: %v", err)
	}
	for i := range 5 {
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Labels: map[string]string{"i": fmt.Sprint(i)}},
			Data:       map[string]string{"text": strings.Repeat("é", i)}}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cm)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dc.Resource(cmRes).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		resource  schema.GroupVersionResource
		namespace string
		selector  string
		atLeast   int
	}{
		{cmRes, ns, "", 5},
		{cmRes, ns, "metadata.name=cm-2", 1},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, "", "", 10},
		{schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, "", "", 0},
		{nsRes, "", "", 2},
	} {
		want, err := dc.Resource(c.resource).Namespace(c.namespace).List(ctx, metav1.ListOptions{FieldSelector: c.selector})
		if err != nil {
			t.Fatal(err)
		}
		got, err := lister.List(ctx, c.resource, c.namespace, c.selector)
		if err != nil {
			t.Fatalf("list %s: %v", c.resource.Resource, err)
		}
		if len(want.Items) < c.atLeast {
			t.Fatalf("%s: %d objects, the test expects at least %d", c.resource.Resource, len(want.Items), c.atLeast)
		}
		if c.selector != "" && len(got) != c.atLeast {
			t.Fatalf("%s with %q: %d objects, want %d", c.resource.Resource, c.selector, len(got), c.atLeast)
		}
		if len(got) != len(want.Items) {
			t.Fatalf("%s: %d objects, the dynamic client's %d", c.resource.Resource, len(got), len(want.Items))
		}
		for i := range got {
			// A list read later may hold newer objects (the namespace's status, a role's rules
			// aggregated): compare what the test created and the kind and names of the rest.
			if got[i].GetName() != want.Items[i].GetName() || got[i].GroupVersionKind() != want.Items[i].GroupVersionKind() {
				t.Errorf("%s item %d: %s %s, the dynamic client's %s %s", c.resource.Resource, i,
					got[i].GroupVersionKind(), got[i].GetName(), want.Items[i].GroupVersionKind(), want.Items[i].GetName())
			}
			if c.resource == cmRes && !reflect.DeepEqual(got[i].Object, want.Items[i].Object) {
				t.Errorf("%s:\n got %#v\nwant %#v", got[i].GetName(), got[i].Object, want.Items[i].Object)
			}
		}
	}
	missing := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "nothings"}
	_, wantErr := dc.Resource(missing).Namespace(ns).List(ctx, metav1.ListOptions{})
	_, err = lister.List(ctx, missing, ns, "")
	if !apierrors.IsNotFound(err) || !apierrors.IsNotFound(wantErr) || err.Error() != wantErr.Error() {
		t.Errorf("an unknown resource: %v, the dynamic client's %v", err, wantErr)
	}
}

// configMapList is the answer to a LIST of n ConfigMaps as the API server writes it, managed
// fields included.
func configMapList(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"123"},"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"metadata":{"name":"cm-%d","namespace":"review-1","uid":"6a1f1b3c-0000-4000-8000-%012d",`+
			`"resourceVersion":"%d","creationTimestamp":"2026-12-04T10:00:00Z",`+
			`"labels":{"app.kubernetes.io/managed-by":"Helm","app":"bench"},`+
			`"annotations":{"meta.helm.sh/release-name":"bench","meta.helm.sh/release-namespace":"review-1"},`+
			`"managedFields":[{"manager":"gitlabk8s-helm","operation":"Apply","apiVersion":"v1","time":"2026-12-04T10:00:00Z",`+
			`"fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}}}]},`+
			`"data":{"a":"value-%d","b":"a longer value with spaces %d"}}`, i, i, 1000+i, i, i)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// BenchmarkDecodeList compares the one pass of decodeList with the dynamic client's decoding
// of the same answer, a LIST of 1000 ConfigMaps.
func BenchmarkDecodeList(b *testing.B) {
	body := configMapList(1000)
	b.Run("once", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if items, err := decodeList(body); err != nil || len(items) != 1000 {
				b.Fatal(len(items), err)
			}
		}
	})
	b.Run("client-go", func(b *testing.B) {
		dec := clientGoListDecoder(b)
		b.ReportAllocs()
		for b.Loop() {
			if items, err := clientGoItems(dec, body); err != nil || len(items) != 1000 {
				b.Fatal(len(items), err)
			}
		}
	})
}
