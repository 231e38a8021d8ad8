package drift

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// project projects with the built-in rules only.
func project(desired, live map[string]any) map[string]any {
	return NewRules(nil, nil).Project(desired, live)
}

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
	got := project(desired, parseYAML(t, liveDeployment))
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
					map[string]any{"manager": "gitlabk8s-helm", "operation": "Update", "fieldsV1": map[string]any{"f:spec": map[string]any{"f:template": map[string]any{}}}},
					map[string]any{"manager": "kube-controller-manager", "operation": "Update", "subresource": "scale", "fieldsV1": map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}},
				}
			},
			want: func(map[string]any) {},
		},
		{
			// No manager is trusted by its name: only the rules say what is not drift.
			name: "image set by an unknown manager whose name says controller is drift",
			edit: func(live map[string]any) {
				container(live)["image"] = "nginx:patched"
				setManagedFields(live, imageManager("image-controller"))
			},
			want: func(d map[string]any) { container(d)["image"] = "nginx:patched" },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := parseYAML(t, liveDeployment)
			tt.edit(live)
			want := parseYAML(t, desiredDeployment)
			tt.want(want)
			got := project(parseYAML(t, desiredDeployment), live)
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
			if diff := cmp.Diff(desired, project(desired, live)); diff != "" {
				t.Errorf("projection differs from desired (-desired +projected):\n%s", diff)
			}
		})
	}
	// A map the chart fills is projected key by key: a key it sets that was removed shows.
	desired := parseYAML(t, "apiVersion: v1\nkind: Service\nmetadata:\n  name: db-hl\n  annotations: {team: data}\n")
	got := project(desired, live)
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
	if diff := cmp.Diff(desired, project(desired, live)); diff != "" {
		t.Errorf("unchanged Secret (-desired +projected):\n%s", diff)
	}
	live["data"].(map[string]any)["password"] = "Y2hhbmdlZA==" // "changed"
	got := project(desired, live)
	if v := got["stringData"].(map[string]any)["password"]; v != "changed" {
		t.Errorf("changed stringData value: got %v, want the live value decoded from data", v)
	}
}

func TestProject_missingObject(t *testing.T) {
	if got := project(parseYAML(t, desiredDeployment), nil); got != nil {
		t.Errorf("Project of a missing live object = %v, want nil", got)
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

func setManagedFields(obj map[string]any, entries ...any) {
	obj["metadata"].(map[string]any)["managedFields"] = entries
}

// imageManager is a managedFields entry of manager owning the image of the container web,
// which FieldsV1 names by its key.
func imageManager(manager string) map[string]any {
	return map[string]any{"manager": manager, "operation": "Update", "fieldsV1": map[string]any{"f:spec": map[string]any{"f:template": map[string]any{"f:spec": map[string]any{
		"f:containers": map[string]any{`k:{"name":"web"}`: map[string]any{".": map[string]any{}, "f:image": map[string]any{}}}}}}}}
}

// scaledByController sets live's replicas as an autoscaler does: as kube-controller-manager,
// through the scale subresource.
func scaledByController(live map[string]any) {
	spec(live)["replicas"] = int64(4)
	setManagedFields(live, map[string]any{"manager": "kube-controller-manager", "operation": "Update", "subresource": "scale", "fieldsV1": map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}})
}

// parseEdited parses text and applies edit to it, when edit is not nil.
func parseEdited(t *testing.T, text string, edit func(obj map[string]any)) map[string]any {
	t.Helper()
	obj := parseYAML(t, text)
	if edit != nil {
		edit(obj)
	}
	return obj
}

// Project hides what the rules leave to others; Yield leaves exactly that out of the apply,
// where the live value differs.
func TestRules_project(t *testing.T) {
	hpa := parseYAML(t, "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}}\n")
	tests := []struct {
		name   string
		rules  Rules
		edit   func(live map[string]any)
		wantFn func(desired map[string]any)
		// yieldFn is what Yield leaves out of desired; nothing when nil.
		yieldFn func(desired map[string]any)
	}{
		{
			name:  "a manager the user ignores",
			rules: NewRules([]Ignore{{Kind: "Deployment", Managers: []string{"image-controller"}}}, nil),
			edit: func(live map[string]any) {
				container(live)["image"] = "nginx:patched"
				setManagedFields(live, imageManager("image-controller"))
			},
			yieldFn: func(d map[string]any) { delete(container(d), "image") },
		},
		{
			name:  "an ignored manager of another kind does not hide the change",
			rules: NewRules([]Ignore{{Kind: "StatefulSet", Managers: []string{"image-controller"}}}, nil),
			edit: func(live map[string]any) {
				container(live)["image"] = "nginx:patched"
				setManagedFields(live, imageManager("image-controller"))
			},
			wantFn: func(d map[string]any) { container(d)["image"] = "nginx:patched" },
		},
		{
			name:  "an ignored manager of another name does not hide the change",
			rules: NewRules([]Ignore{{Name: "api", Managers: []string{"image-controller"}}}, nil),
			edit: func(live map[string]any) {
				container(live)["image"] = "nginx:patched"
				setManagedFields(live, imageManager("image-controller"))
			},
			wantFn: func(d map[string]any) { container(d)["image"] = "nginx:patched" },
		},
		{
			name:    "a JSON pointer the user ignores, whoever changed it",
			rules:   NewRules([]Ignore{{Kind: "Deployment", Name: "web", JSONPointers: []string{"/spec/template/spec/containers/0/image"}}}, nil),
			edit:    func(live map[string]any) { container(live)["image"] = "nginx:patched" },
			yieldFn: func(d map[string]any) { delete(container(d), "image") },
		},
		{
			name:  "an ignored pointer hides only what it names",
			rules: NewRules([]Ignore{{JSONPointers: []string{"/spec/template/spec/containers/0/image"}}}, nil),
			edit: func(live map[string]any) {
				container(live)["image"] = "nginx:patched"
				spec(live)["replicas"] = int64(9)
			},
			wantFn:  func(d map[string]any) { spec(d)["replicas"] = int64(9) },
			yieldFn: func(d map[string]any) { delete(container(d), "image") },
		},
		{
			name:    "the replicas of an object the release's HorizontalPodAutoscaler targets",
			rules:   NewRules(nil, []map[string]any{hpa}),
			edit:    func(live map[string]any) { spec(live)["replicas"] = int64(6) },
			yieldFn: func(d map[string]any) { delete(spec(d), "replicas") },
		},
		{
			name:   "replicas set by kubectl scale without an autoscaler are drift",
			rules:  NewRules(nil, nil),
			edit:   func(live map[string]any) { spec(live)["replicas"] = int64(6) },
			wantFn: func(d map[string]any) { spec(d)["replicas"] = int64(6) },
		},
		{
			// FieldsV1 names items of lists without keys by index.
			name:  "a list item an ignored manager owns by index",
			rules: NewRules([]Ignore{{Managers: []string{"tuner"}}}, nil),
			edit: func(live map[string]any) {
				container(live)["env"].([]any)[0].(map[string]any)["value"] = "tuned"
				setManagedFields(live, map[string]any{"manager": "tuner", "operation": "Update", "fieldsV1": map[string]any{"f:spec": map[string]any{"f:template": map[string]any{"f:spec": map[string]any{
					"f:containers": map[string]any{`k:{"name":"web"}`: map[string]any{"f:env": map[string]any{"i:0": map[string]any{"f:value": map[string]any{}}}}}}}}}})
			},
			yieldFn: func(d map[string]any) { delete(container(d)["env"].([]any)[0].(map[string]any), "value") },
		},
		{
			name:  "replicas an autoscaler left at the chart's value",
			rules: NewRules(nil, []map[string]any{hpa}),
			edit:  func(map[string]any) {},
		},
		{
			name:    "replicas a built-in controller scaled",
			rules:   NewRules(nil, nil),
			edit:    scaledByController,
			yieldFn: func(d map[string]any) { delete(spec(d), "replicas") },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := parseEdited(t, liveDeployment, tt.edit)
			desired := parseYAML(t, desiredDeployment)
			if diff := cmp.Diff(parseEdited(t, desiredDeployment, tt.wantFn), tt.rules.Project(desired, live)); diff != "" {
				t.Errorf("projection (-want +got):\n%s", diff)
			}
			applied := parseEdited(t, desiredDeployment, tt.yieldFn)
			// The previous revision set what desired sets: the user changed nothing.
			previous := parseYAML(t, desiredDeployment)
			if diff := cmp.Diff(applied, tt.rules.Yield(desired, previous, live)); diff != "" {
				t.Errorf("yield (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(parseYAML(t, desiredDeployment), desired); diff != "" {
				t.Errorf("Yield changed desired (-before +after):\n%s", diff)
			}
		})
	}
}

// Yield leaves a field to others only where the user did not change it: where desired means
// what the previous revision set there. A change of the user's is applied, as the plan shows it.
func TestRules_yieldKeepsWhatTheUserChanged(t *testing.T) {
	ignoreImage := NewRules([]Ignore{{Kind: "Deployment", Managers: []string{"image-controller"}}}, nil)
	patchImage := func(live map[string]any) {
		container(live)["image"] = "nginx:patched"
		setManagedFields(live, imageManager("image-controller"))
	}
	tests := []struct {
		name  string
		rules Rules
		edit  func(live map[string]any)
		// desiredFn changes desired, previousFn the previous revision's object; the previous
		// revision is desired as it was before desiredFn when previousFn is nil.
		desiredFn, previousFn func(obj map[string]any)
		// noPrevious makes the object new in this revision.
		noPrevious bool
		// yieldFn is what Yield leaves out of desired; nothing when nil.
		yieldFn func(desired map[string]any)
	}{
		{
			name:    "an image the user did not change is left to its manager",
			rules:   ignoreImage,
			edit:    patchImage,
			yieldFn: func(d map[string]any) { delete(container(d), "image") },
		},
		{
			name:      "an image the user changed is applied",
			rules:     ignoreImage,
			edit:      patchImage,
			desiredFn: func(d map[string]any) { container(d)["image"] = "nginx:1.28" },
		},
		{
			name:      "a change elsewhere leaves the image to its manager",
			rules:     ignoreImage,
			edit:      patchImage,
			desiredFn: func(d map[string]any) { env(d)[0].(map[string]any)["value"] = "staging" },
			yieldFn:   func(d map[string]any) { delete(container(d), "image") },
		},
		{
			name:       "an object new in this revision is applied whole",
			rules:      ignoreImage,
			edit:       patchImage,
			noPrevious: true,
		},
		{
			name:       "a field the previous revision did not set is applied",
			rules:      ignoreImage,
			edit:       patchImage,
			previousFn: func(p map[string]any) { delete(container(p), "image") },
		},
		{
			name:  "containers are matched by name, not by position",
			rules: ignoreImage,
			edit:  patchImage,
			previousFn: func(p map[string]any) {
				spec(p)["template"].(map[string]any)["spec"].(map[string]any)["containers"] = []any{
					map[string]any{"name": "sidecar", "image": "nginx:1.28"}, container(p)}
			},
			yieldFn: func(d map[string]any) { delete(container(d), "image") },
		},
		{
			name:       "the same value spelled otherwise is no change",
			rules:      NewRules([]Ignore{{JSONPointers: []string{"/spec/template/spec/containers/0/resources"}}}, nil),
			edit:       func(live map[string]any) { limits(live)["cpu"] = "2" },
			previousFn: func(p map[string]any) { limits(p)["cpu"] = "500m" },
			yieldFn:    func(d map[string]any) { delete(container(d), "resources") },
		},
		{
			name:       "a key the user removed under an ignored field is a change",
			rules:      NewRules([]Ignore{{JSONPointers: []string{"/spec/template/spec/containers/0/resources"}}}, nil),
			edit:       func(live map[string]any) { limits(live)["cpu"] = "2" },
			previousFn: func(p map[string]any) { limits(p)["ephemeral-storage"] = "1Gi" },
		},
		{
			name:    "replicas an autoscaler set while the chart's stayed",
			rules:   NewRules(nil, nil),
			edit:    scaledByController,
			yieldFn: func(d map[string]any) { delete(spec(d), "replicas") },
		},
		{
			name:      "replicas the user changed in the chart are applied",
			rules:     NewRules(nil, nil),
			edit:      scaledByController,
			desiredFn: func(d map[string]any) { spec(d)["replicas"] = int64(3) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := parseEdited(t, liveDeployment, tt.edit)
			previous := parseEdited(t, desiredDeployment, tt.previousFn)
			if tt.noPrevious {
				previous = nil
			}
			desired := parseEdited(t, desiredDeployment, tt.desiredFn)
			applied := parseEdited(t, desiredDeployment, func(obj map[string]any) {
				if tt.desiredFn != nil {
					tt.desiredFn(obj)
				}
				if tt.yieldFn != nil {
					tt.yieldFn(obj)
				}
			})
			before := manifest.DeepCopy(desired)
			if diff := cmp.Diff(applied, tt.rules.Yield(desired, previous, live)); diff != "" {
				t.Errorf("yield (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, desired); diff != "" {
				t.Errorf("Yield changed desired (-before +after):\n%s", diff)
			}
		})
	}
}

func TestIgnore_Validate(t *testing.T) {
	tests := []struct {
		ignore Ignore
		want   []string
	}{
		{ignore: Ignore{Kind: "Deployment", JSONPointers: []string{"/spec/replicas", "/metadata/annotations/a~1b"}, Managers: []string{"vpa"}}},
		{ignore: Ignore{Kind: "Deployment"}, want: []string{"the rule ignores nothing"}},
		{ignore: Ignore{JSONPointers: []string{"spec/replicas", "/", "/a~2"}}, want: []string{`json_pointers[0]: a JSON pointer starts with "/"`, "json_pointers[1]: the pointer names the whole object", `json_pointers[2]: token "a~2"`}},
		{ignore: Ignore{Managers: []string{" "}}, want: []string{"managers[0]: a manager name is the exact name"}},
	}
	for _, tt := range tests {
		errs := tt.ignore.Validate()
		if len(errs) != len(tt.want) {
			t.Errorf("%+v: errors %v, want %d", tt.ignore, errs, len(tt.want))
			continue
		}
		for i, err := range errs {
			var rule *RuleError
			if !errors.As(err, &rule) || !strings.HasPrefix(err.Error(), tt.want[i]) {
				t.Errorf("%+v: error %d = %v, want a *RuleError starting %q", tt.ignore, i, err, tt.want[i])
			}
		}
	}
}

func TestPointerTokens(t *testing.T) {
	got, err := pointerTokens("/metadata/annotations/example.com~1owner/a~0b")
	if want := []string{"metadata", "annotations", "example.com/owner", "a~b"}; err != nil || !cmp.Equal(got, want) {
		t.Errorf("pointerTokens = %q, %v; want %q", got, err, want)
	}
}

func TestRules_projectReadsOnlyTheFieldsOfManagersItLeavesFieldsTo(t *testing.T) {
	desired := parseYAML(t, desiredDeployment)
	live := parseYAML(t, liveDeployment)
	scaledByController(live)
	// The provider's own entry, which owns every field it applies, is not read: fields that do
	// not parse there leave the controller's fields owned, where reading every entry found
	// nothing owned and showed the controller's replicas as drift.
	entries := live["metadata"].(map[string]any)["managedFields"].([]any)
	setManagedFields(live, append(entries, map[string]any{"manager": "gitlabk8s-helm", "operation": "Apply", "fieldsV1": map[string]any{"f:spec": "not a field set"}})...)
	if got, want := spec(project(desired, live))["replicas"], spec(desired)["replicas"]; got != want {
		t.Errorf("replicas projected as %v, want the chart's %v: the controller's fields are owned whatever the provider's entry holds", got, want)
	}
}

func TestRules_ProjectAll(t *testing.T) {
	rules := NewRules([]Ignore{{Kind: "Deployment", Managers: []string{"image-controller"}}}, nil)
	var desired, live []map[string]any
	for i := range 40 {
		d, l := parseYAML(t, desiredDeployment), parseYAML(t, liveDeployment)
		spec(d)["replicas"], spec(l)["replicas"] = int64(i), int64(i)
		switch i % 4 {
		case 0:
			l = nil // gone from the cluster
		case 1:
			container(l)["image"] = "nginx:patched"
			setManagedFields(l, imageManager("image-controller"))
		case 2:
			container(l)["image"] = "nginx:edited"
		}
		desired, live = append(desired, d), append(live, l)
	}
	got := rules.ProjectAll(desired, live)
	if len(got) != len(desired) {
		t.Fatalf("%d projections of %d objects", len(got), len(desired))
	}
	for i := range desired {
		if diff := cmp.Diff(rules.Project(desired[i], live[i]), got[i]); diff != "" {
			t.Errorf("object %d: ProjectAll differs from Project (-Project +ProjectAll):\n%s", i, diff)
		}
		switch {
		case live[i] == nil:
			if got[i] != nil {
				t.Errorf("object %d, gone: projected as %v", i, got[i])
			}
		case spec(got[i])["replicas"] != int64(i):
			t.Errorf("object %d projected with the replicas of another: %v", i, spec(got[i])["replicas"])
		case i%4 == 2 && container(got[i])["image"] != "nginx:edited":
			t.Errorf("object %d: the edited image projected as %v", i, container(got[i])["image"])
		case i%4 == 1 && container(got[i])["image"] != "nginx:1.27":
			t.Errorf("object %d: the image an ignored manager set projected as %v", i, container(got[i])["image"])
		}
	}
}
