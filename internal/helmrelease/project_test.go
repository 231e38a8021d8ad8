package helmrelease

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func parseYAML(t *testing.T, text string) map[string]any {
	t.Helper()
	var out map[string]any
	if err := yaml.Unmarshal([]byte(text), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

const desiredDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, creationTimestamp: null}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        args: ["--port", "8080"]
        env:
        - {name: MODE, value: review}
        - {name: EMPTY, value: ""}
        resources:
          limits: {cpu: 0.5, memory: 128Mi}
`

// liveDeployment is desiredDeployment as the API server returns it: defaults, Helm's labels,
// status, quantities in canonical form, empty values dropped.
const liveDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: review
  uid: 0d9c
  resourceVersion: "42"
  labels: {app: web, app.kubernetes.io/managed-by: Helm}
  annotations: {meta.helm.sh/release-name: web, deployment.kubernetes.io/revision: "1"}
  managedFields:
  - manager: gitlabk8s-helm
    operation: Update
    fieldsV1: {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {"f:image": {}}}}}}}
spec:
  replicas: 2
  revisionHistoryLimit: 10
  progressDeadlineSeconds: 600
  selector: {matchLabels: {app: web}}
  strategy: {type: RollingUpdate}
  template:
    metadata: {labels: {app: web}}
    spec:
      restartPolicy: Always
      containers:
      - name: web
        image: nginx:1.27
        imagePullPolicy: IfNotPresent
        args: ["--port", "8080"]
        env:
        - {name: MODE, value: review}
        - {name: EMPTY}
        resources:
          limits: {cpu: 500m, memory: 128Mi}
status: {replicas: 2, readyReplicas: 2}
`

func TestProject_unchangedObjectProjectsToDesired(t *testing.T) {
	desired := parseYAML(t, desiredDeployment)
	got := Project(desired, parseYAML(t, liveDeployment))
	if diff := cmp.Diff(desired, got); diff != "" {
		t.Errorf("projection of an unchanged object differs from desired (-desired +projected):\n%s", diff)
	}
}

func TestProject_drift(t *testing.T) {
	tests := []struct {
		name string
		edit func(live map[string]any)
		want func(desired map[string]any)
	}{
		{
			name: "image changed with kubectl",
			edit: func(live map[string]any) { container(live)["image"] = "nginx:1.28" },
			want: func(d map[string]any) { container(d)["image"] = "nginx:1.28" },
		},
		{
			name: "replicas scaled with kubectl",
			edit: func(live map[string]any) { spec(live)["replicas"] = int64(5) },
			want: func(d map[string]any) { spec(d)["replicas"] = int64(5) },
		},
		{
			name: "env var value changed",
			edit: func(live map[string]any) { env(live)[0].(map[string]any)["value"] = "debug" },
			want: func(d map[string]any) { env(d)[0].(map[string]any)["value"] = "debug" },
		},
		{
			name: "env var removed",
			edit: func(live map[string]any) { container(live)["env"] = env(live)[1:] },
			want: func(d map[string]any) { container(d)["env"] = env(d)[1:] },
		},
		{
			name: "env var added by hand is not the chart's",
			edit: func(live map[string]any) {
				container(live)["env"] = append(env(live), map[string]any{"name": "EXTRA", "value": "x"})
			},
			want: func(map[string]any) {},
		},
		{
			name: "arg appended: the chart owns the whole list of scalars",
			edit: func(live map[string]any) { container(live)["args"] = []any{"--port", "8080", "--debug"} },
			want: func(d map[string]any) { container(d)["args"] = []any{"--port", "8080", "--debug"} },
		},
		{
			name: "label removed",
			edit: func(live map[string]any) { delete(live["metadata"].(map[string]any)["labels"].(map[string]any), "app") },
			// Normalize drops the empty map before the manifest is rendered.
			want: func(d map[string]any) { d["metadata"].(map[string]any)["labels"] = map[string]any{} },
		},
		{
			name: "cpu limit changed",
			edit: func(live map[string]any) { limits(live)["cpu"] = "1" },
			want: func(d map[string]any) { limits(d)["cpu"] = "1" },
		},
		{
			name: "replicas set by an autoscaler are the controller's",
			edit: func(live map[string]any) {
				spec(live)["replicas"] = int64(7)
				live["metadata"].(map[string]any)["managedFields"] = []any{
					map[string]any{"manager": FieldManager, "operation": "Update", "fieldsV1": map[string]any{"f:spec": map[string]any{"f:template": map[string]any{}}}},
					map[string]any{"manager": "kube-controller-manager", "operation": "Update", "subresource": "scale", "fieldsV1": map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}},
				}
			},
			want: func(map[string]any) {},
		},
		{
			name: "image set by a controller of a container matched by key",
			edit: func(live map[string]any) {
				container(live)["image"] = "nginx:patched"
				live["metadata"].(map[string]any)["managedFields"] = []any{
					map[string]any{"manager": "image-operator", "operation": "Update", "fieldsV1": map[string]any{"f:spec": map[string]any{"f:template": map[string]any{"f:spec": map[string]any{"f:containers": map[string]any{`k:{"name":"web"}`: map[string]any{"f:image": map[string]any{}}}}}}}},
				}
			},
			want: func(map[string]any) {},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := parseYAML(t, liveDeployment)
			tt.edit(live)
			want := parseYAML(t, desiredDeployment)
			tt.want(want)
			got := Project(parseYAML(t, desiredDeployment), live)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("projection (-want +got):\n%s", diff)
			}
		})
	}
}

// A map the chart leaves empty or null is the chart's as it is: what Helm (its ownership
// annotations) and others add to it is not drift.
func TestProject_emptyMapsKeepWhatOthersAdd(t *testing.T) {
	live := parseYAML(t, `
apiVersion: v1
kind: Service
metadata:
  name: db-hl
  labels: {app: db, app.kubernetes.io/managed-by: Helm}
  annotations: {meta.helm.sh/release-name: db, meta.helm.sh/release-namespace: review, cloud.example/lb: internal}
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{name: pg, port: 5432, targetPort: pg, protocol: TCP}]
`)
	for _, annotations := range []string{"annotations: {}", "annotations:", "annotations: null"} {
		t.Run(annotations, func(t *testing.T) {
			desired := parseYAML(t, `
apiVersion: v1
kind: Service
metadata:
  name: db-hl
  labels: {app: db}
  `+annotations+`
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{name: pg, port: 5432, targetPort: pg}]
`)
			if diff := cmp.Diff(desired, Project(desired, live)); diff != "" {
				t.Errorf("projection differs from desired (-desired +projected):\n%s", diff)
			}
		})
	}
	// A map the chart fills is projected key by key: a key it sets that was removed shows.
	desired := parseYAML(t, "apiVersion: v1\nkind: Service\nmetadata:\n  name: db-hl\n  annotations: {team: data}\n")
	got := Project(desired, live)
	if want := map[string]any{}; !cmp.Equal(got["metadata"].(map[string]any)["annotations"], want) {
		t.Errorf("annotations projected to %v, want the removed key to show as %v", got["metadata"].(map[string]any)["annotations"], want)
	}
}

func TestProject_secretStringDataComparedWithData(t *testing.T) {
	desired := parseYAML(t, `
apiVersion: v1
kind: Secret
metadata: {name: db}
type: Opaque
stringData: {password: hunter22}
data: {user: YWRtaW4=}
`)
	live := parseYAML(t, `
apiVersion: v1
kind: Secret
metadata: {name: db, namespace: review}
type: Opaque
data: {password: aHVudGVyMjI=, user: YWRtaW4=}
`)
	if diff := cmp.Diff(desired, Project(desired, live)); diff != "" {
		t.Errorf("unchanged Secret (-desired +projected):\n%s", diff)
	}
	live["data"].(map[string]any)["password"] = "Y2hhbmdlZA==" // "changed"
	got := Project(desired, live)
	if v := got["stringData"].(map[string]any)["password"]; v != "changed" {
		t.Errorf("changed stringData value: got %v, want the live value decoded from data", v)
	}
}

func TestProject_missingObject(t *testing.T) {
	if got := Project(parseYAML(t, desiredDeployment), nil); got != nil {
		t.Errorf("Project of a missing live object = %v, want nil", got)
	}
}

func TestIsControllerManager(t *testing.T) {
	for manager, want := range map[string]bool{
		"kube-controller-manager": true,
		"vpa-autoscaler":          true,
		"prometheus-operator":     true,
		"kubectl-edit":            false,
		"kubectl":                 false,
		"helm":                    false,
		FieldManager:              false,
	} {
		if got := IsControllerManager(manager); got != want {
			t.Errorf("IsControllerManager(%q) = %v, want %v", manager, got, want)
		}
	}
}

func spec(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }

func container(obj map[string]any) map[string]any {
	return spec(obj)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
}

func env(obj map[string]any) []any { return container(obj)["env"].([]any) }

func limits(obj map[string]any) map[string]any {
	return container(obj)["resources"].(map[string]any)["limits"].(map[string]any)
}
