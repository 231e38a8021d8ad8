package manifest

import (
	"testing"
)

func TestNormalize_dropsWhatTheServerSets(t *testing.T) {
	live := `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: review-x
  uid: 5d0c7e1a-0000-4000-8000-000000000000
  resourceVersion: "12345"
  generation: 3
  creationTimestamp: "2024-01-01T00:00:00Z"
  deletionTimestamp: "2024-01-02T00:00:00Z"
  deletionGracePeriodSeconds: 30
  selfLink: /apis/apps/v1/namespaces/review-x/deployments/web
  managedFields:
  - manager: gitlabk8s
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"kind":"Deployment"}'
    gitlabk8s.io/pipeline-url: https://gitlab.example.com/group/web/-/pipelines/1
    gitlabk8s.io/job-url: https://gitlab.example.com/group/web/-/jobs/2
    gitlabk8s.io/commit-sha: 0123456789abcdef
    gitlabk8s.io/merge-request-iid: "7"
  labels: {}
spec:
  replicas: 2
  paused: null
  template:
    spec:
      containers:
      - name: web
        env:
        - name: EMPTY
          value: null
status:
  readyReplicas: 2
`
	want := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: review-x
spec:
  replicas: 2
  template:
    spec:
      containers:
      - env:
        - name: EMPTY
        name: web
`
	if got := normalized(t, live); got != want {
		t.Errorf("Normalize gave\n%s\nwant\n%s", got, want)
	}
}

// normalized renders the first object of doc normalized into namespace review-x, and checks
// that Normalize left the object as it was.
func normalized(t *testing.T, doc string) string {
	t.Helper()
	objs, err := SplitDocuments(doc)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := Render(objs[0])
	got, err := Render(Normalize(objs[0], "review-x", true))
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := Render(objs[0]); after != before {
		t.Errorf("Normalize changed its input:\n%s", after)
	}
	return got
}

func TestNormalize_namespaceFollowsScope(t *testing.T) {
	tests := []struct {
		desc             string
		namespace        any
		defaultNamespace string
		namespaced       bool
		want             any
	}{
		{"namespaced without namespace", nil, "review-x", true, "review-x"},
		{"namespaced with empty namespace", "", "review-x", true, "review-x"},
		{"namespaced with own namespace", "monitoring", "review-x", true, "monitoring"},
		{"namespaced, no default", nil, "", true, nil},
		{"cluster-scoped with namespace", "review-x", "review-x", false, nil},
		{"cluster-scoped without namespace", nil, "review-x", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			metadata := map[string]any{"name": "x"}
			if tt.namespace != nil {
				metadata["namespace"] = tt.namespace
			}
			got := Normalize(Object{"apiVersion": "v1", "kind": "Thing", "metadata": metadata}, tt.defaultNamespace, tt.namespaced)
			if ns := objectMetadata(got)["namespace"]; ns != tt.want {
				t.Errorf("namespace = %v, want %v", ns, tt.want)
			}
		})
	}
}

func TestNormalize_emptyMetadataGoesAway(t *testing.T) {
	tests := []struct {
		desc string
		obj  Object
		want string
	}{
		{"nil", nil, "{}\n"},
		{"empty annotations left after dropping", Object{"kind": "Namespace", "metadata": map[string]any{"annotations": map[string]any{lastAppliedAnnotation: "{}"}}}, "kind: Namespace\n"},
		{"metadata with only server fields", Object{"kind": "Namespace", "metadata": map[string]any{"uid": "u", "labels": map[string]any{}}}, "kind: Namespace\n"},
		{"other annotations stay", Object{"kind": "Namespace", "metadata": map[string]any{"annotations": map[string]any{"a": "b", lastAppliedAnnotation: "{}"}}}, "kind: Namespace\nmetadata:\n  annotations:\n    a: b\n"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, err := Render(Normalize(tt.obj, "review-x", false))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// A null where a built-in kind holds a string is kept as the API server keeps it, an empty
// string (as a server-side apply of these documents answered on the local cluster), and so is
// one among a custom resource's labels; a null of any other field, or of a custom resource's
// spec, is dropped.
func TestNormalize_nullsAsTheAPIServerKeepsThem(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{`
apiVersion: v1
kind: ConfigMap
metadata: {name: n1, labels: {a: null, b: x}, annotations: {c: null}}
data: {level: null, other: x}
binaryData: {bin: null}
`, `apiVersion: v1
binaryData:
  bin: ""
data:
  level: ""
  other: x
kind: ConfigMap
metadata:
  annotations:
    c: ""
  labels:
    a: ""
    b: x
  name: n1
  namespace: review-x
`},
		{`
apiVersion: v1
kind: Secret
metadata: {name: s1}
data: {d: null}
stringData: {sd: null}
`, `apiVersion: v1
data:
  d: ""
kind: Secret
metadata:
  name: s1
  namespace: review-x
stringData:
  sd: ""
`},
		{`
apiVersion: apps/v1
kind: Deployment
metadata: {name: d1, creationTimestamp: null}
spec:
  replicas: null
  selector: {matchLabels: {app: d1, z: null}}
  template:
    metadata: {labels: {app: d1, z: null}}
    spec:
      nodeSelector: {k: null}
      containers: [{name: c, image: x, args: [null, a], env: [{name: E, value: null}], resources: null}]
`, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d1
  namespace: review-x
spec:
  selector:
    matchLabels:
      app: d1
      z: ""
  template:
    metadata:
      labels:
        app: d1
        z: ""
    spec:
      containers:
      - args:
        - ""
        - a
        env:
        - name: E
        image: x
        name: c
      nodeSelector:
        k: ""
`},
		{`
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, labels: {a: null}}
spec: {data: {level: null}, args: [null]}
`, `apiVersion: example.com/v1
kind: Widget
metadata:
  labels:
    a: ""
  name: w1
  namespace: review-x
spec:
  args:
  - null
  data: {}
`},
	} {
		if got := normalized(t, tt.doc); got != tt.want {
			t.Errorf("Normalize gave\n%s\nwant\n%s", got, tt.want)
		}
	}
}
