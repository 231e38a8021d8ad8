package kube

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/yaml"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/drift"
)

// Objects with every kind of list the API server's managed fields name: keyed lists
// (containers, env, ports, ownerReferences), sets (finalizers), atomic lists (args,
// tolerations' values, policyTypes) and maps.
var extractFixtures = []string{`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: review-x
  labels: {app: web, team: a}
  annotations: {note: x}
  finalizers: [example.com/a, example.com/b]
  ownerReferences:
  - {apiVersion: v1, kind: ConfigMap, name: owner, uid: 11111111-1111-1111-1111-111111111111}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: web:1
        args: [--a, --b]
        env:
        - {name: A, value: "1"}
        - {name: B, value: "2"}
        ports:
        - {containerPort: 8080, protocol: TCP, name: http}
        - {containerPort: 8080, protocol: UDP, name: udp}
        volumeMounts:
        - {name: data, mountPath: /data}
      - name: sidecar
        image: side:1
        env:
        - {name: C, value: "3"}
      tolerations:
      - {key: k, operator: Exists}
      volumes:
      - {name: data, emptyDir: {}}
status:
  replicas: 2
`, `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: review-x}
spec:
  selector: {app: web}
  ports:
  - {port: 80, protocol: TCP, targetPort: 8080, name: http}
  - {port: 53, protocol: UDP, targetPort: 53, name: dns}
`, `
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: isolate, namespace: review-x, labels: {a: b}}
spec:
  podSelector: {matchLabels: {app: web}}
  policyTypes: [Ingress, Egress]
  ingress:
  - from:
    - podSelector: {}
    ports:
    - {port: 80, protocol: TCP}
`}

// drift.Extract follows managed fields without a schema exactly as the schema-aware
// ExtractItems does, for any subset of an object's fields.
func TestExtractFields_sameAsTheSchema(t *testing.T) {
	converter := applyconfigurations.NewTypeConverter(scheme.Scheme)
	for fi, fixture := range extractFixtures {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(fixture), &obj); err != nil {
			t.Fatal(err)
		}
		live := &unstructured.Unstructured{Object: obj}
		liveTyped, err := converter.ObjectToTyped(live, typed.AllowDuplicates)
		if err != nil {
			t.Fatal(err)
		}
		all, err := liveTyped.ToFieldSet()
		if err != nil {
			t.Fatal(err)
		}
		var paths []fieldpath.Path
		all.Iterate(func(p fieldpath.Path) { paths = append(paths, p.Copy()) })
		for seed := range uint64(40) {
			// Seed 0 keeps everything; the others keep a random part, as managers split an object.
			rng := rand.New(rand.NewPCG(seed, uint64(fi)))
			subset := &fieldpath.Set{}
			for _, p := range paths {
				if seed == 0 || rng.IntN(3) > 0 {
					subset.Insert(p)
				}
			}
			leaves := subset.Leaves()
			want := liveTyped.ExtractItems(leaves).AsValue().Unstructured()
			got := drift.Extract(obj, leaves)
			if !reflect.DeepEqual(normalizeEmpty(got), normalizeEmpty(want)) {
				t.Errorf("%s, seed %d, fields %s:\ngot  %v\nwant %v", live.GetKind(), seed, leaves, got, want)
			}
		}
	}
}

// normalizeEmpty treats a missing map and an empty one alike, and numbers by value, since
// ExtractItems returns nil for an object of which nothing is extracted.
func normalizeEmpty(v any) any {
	switch t := v.(type) {
	case nil:
		return map[string]any{}
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = normalizeEmpty(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = normalizeEmpty(x)
		}
		return out
	case int64, float64, int:
		return fmt.Sprint(t)
	default:
		return v
	}
}

// What drift.Extract returns is the caller's to change: the live object stays as it was.
func TestExtractFields_returnsACopy(t *testing.T) {
	live := map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "1"}}, "spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}}}}
	set := &fieldpath.Set{}
	set.Insert(fieldpath.MakePathOrDie("metadata", "labels"))
	set.Insert(fieldpath.MakePathOrDie("spec", "ports"))
	out := drift.Extract(live, set).(map[string]any)
	out["metadata"].(map[string]any)["labels"].(map[string]any)["a"] = "changed"
	out["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["port"] = int64(1)
	if got := live["metadata"].(map[string]any)["labels"].(map[string]any)["a"]; got != "1" {
		t.Errorf("live label changed to %v through the result", got)
	}
	if got := live["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["port"]; got != int64(80) {
		t.Errorf("live port changed to %v through the result", got)
	}
}
