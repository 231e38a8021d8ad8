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
	objs, err := SplitDocuments(live)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := Render(objs[0])
	got, err := Render(Normalize(objs[0], "review-x", true))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("Normalize gave\n%s\nwant\n%s", got, want)
	}
	if after, _ := Render(objs[0]); after != before {
		t.Errorf("Normalize changed its input:\n%s", after)
	}
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
