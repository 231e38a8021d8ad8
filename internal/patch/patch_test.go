package patch

import (
	"errors"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestApply_patchesSelectedObjects(t *testing.T) {
	tests := []struct {
		name    string
		patches []Patch
		// want are the objects after patching, as YAML; "" for a deleted object.
		want    []string
		patched []bool
	}{
		{
			name: "strategic merge adds a field and merges containers by name",
			patches: []Patch{{Target: Target{Kind: "Deployment"}, Patch: `
spec:
  template:
    spec:
      nodeSelector: {disk: ssd}
      containers:
      - name: web
        resources: {limits: {memory: 64Mi}}`}},
			want:    []string{deployment("", 1, "nodeSelector: {disk: ssd}", "resources: {limits: {memory: 64Mi}}"), serviceYAML, secretYAML},
			patched: []bool{true, false, false},
		},
		{
			name: "JSON 6902 in JSON replaces a field",
			patches: []Patch{{Target: Target{Group: "apps", Version: "v1", Kind: "Deployment", Name: "web"},
				Patch: `[{"op": "replace", "path": "/spec/replicas", "value": 3}]`}},
			want:    []string{deployment("", 3, "", ""), serviceYAML, secretYAML},
			patched: []bool{true, false, false},
		},
		{
			name: "JSON 6902 in YAML, selected by label and by regular expression",
			patches: []Patch{
				{Target: Target{LabelSelector: "app=web"}, Patch: "- {op: add, path: /metadata/annotations, value: {team: a}}"},
				{Target: Target{Kind: "Serv.*", Name: "w.b"}, Patch: "- {op: add, path: /metadata/labels/tier, value: front}"},
			},
			want: []string{deployment("annotations: {team: a}", 1, "", ""), `
apiVersion: v1
kind: Service
metadata: {name: web, labels: {app: other, tier: front}}
spec: {ports: [{port: 80}]}`, secretYAML},
			patched: []bool{true, true, false},
		},
		{
			name: "a strategic-merge patch naming another object keeps the object's name",
			patches: []Patch{{Target: Target{Kind: "Secret"}, Patch: `
apiVersion: v1
kind: Secret
metadata: {name: something-else}
stringData: {token: from-the-patch}`}},
			want: []string{deploymentYAML, serviceYAML, `
apiVersion: v1
kind: Secret
metadata: {name: web, namespace: other}
stringData: {token: from-the-patch}`},
			patched: []bool{false, false, true},
		},
		{
			name:    "an object without a namespace is in the release's",
			patches: []Patch{{Target: Target{Kind: ".*", Namespace: "release-ns"}, Patch: `{"metadata": {"annotations": {"a": "b"}}}`}},
			want: []string{deployment("annotations: {a: b}", 1, "", ""), `
apiVersion: v1
kind: Service
metadata: {name: web, labels: {app: other}, annotations: {a: b}}
spec: {ports: [{port: 80}]}`, secretYAML},
			patched: []bool{true, true, false},
		},
		{
			name:    "$patch: delete deletes",
			patches: []Patch{{Target: Target{Kind: "Service"}, Patch: "$patch: delete"}},
			want:    []string{deploymentYAML, "", secretYAML},
			patched: []bool{false, true, false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := Parse(tt.patches)
			if err != nil {
				t.Fatal(err)
			}
			got, patched, err := set.Apply(fixtureObjects(t), "release-ns")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(patched, tt.patched) {
				t.Errorf("patched = %v, want %v", patched, tt.patched)
			}
			for i, want := range tt.want {
				if !reflect.DeepEqual(got[i], object(t, want)) {
					gotYAML, _ := yaml.Marshal(got[i])
					t.Errorf("object %d:\n%s\nwant:\n%s", i, gotYAML, want)
				}
			}
		})
	}
}

func TestApply_leavesItsInputAlone(t *testing.T) {
	objs := fixtureObjects(t)
	set, err := Parse([]Patch{{Target: Target{Kind: "Deployment"}, Patch: "- {op: replace, path: /spec/replicas, value: 2}"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := set.Apply(objs, "ns"); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(objs, fixtureObjects(t)) {
		t.Error("Apply changed the objects it was given")
	}
}

func TestApply_failsNamingThePatch(t *testing.T) {
	tests := []struct {
		name    string
		patches []Patch
		is      error
	}{
		{
			name: "a patch that matches nothing",
			patches: []Patch{
				{Target: Target{Kind: "Deployment"}, Patch: "{metadata: {labels: {a: b}}}"},
				{Target: Target{Kind: "Deployment", Name: "api"}, Patch: "{metadata: {labels: {a: b}}}"},
			},
			is: ErrNoMatch,
		},
		{
			name: "a label selector that matches nothing",
			patches: []Patch{
				{Target: Target{Kind: "Service"}, Patch: "{metadata: {labels: {a: b}}}"},
				{Target: Target{LabelSelector: "app=web,tier=cache"}, Patch: "{metadata: {labels: {a: b}}}"},
			},
			is: ErrNoMatch,
		},
		{
			name: "an operation on a path that is not there",
			patches: []Patch{
				{Target: Target{Kind: "Service"}, Patch: "{metadata: {labels: {a: b}}}"},
				{Target: Target{Kind: "Service"}, Patch: "[{op: replace, path: /spec/missing/x, value: 1}]"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := Parse(tt.patches)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = set.Apply(fixtureObjects(t), "ns")
			var perr *Error
			if !errors.As(err, &perr) || perr.Index != 1 {
				t.Fatalf("err = %v, want an *Error of patches[1]", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want %v", err, tt.is)
			}
		})
	}
}

func TestParse_refusesWhatCannotApply(t *testing.T) {
	tests := []struct {
		name  string
		patch Patch
	}{
		{"no kind, name or label selector", Patch{Target: Target{Group: "apps", Version: "v1"}, Patch: "{}"}},
		{"a label selector that does not parse", Patch{Target: Target{LabelSelector: "app in (web"}, Patch: "{}"}},
		{"a regular expression that does not compile", Patch{Target: Target{Name: "web("}, Patch: "{}"}},
		{"a patch that is not YAML", Patch{Target: Target{Kind: "Service"}, Patch: "a: [b"}},
		{"a scalar", Patch{Target: Target{Kind: "Service"}, Patch: "just text"}},
		{"a list that is no JSON 6902 patch", Patch{Target: Target{Kind: "Service"}, Patch: "- {path: /spec}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.patch.Validate(); err == nil {
				t.Error("Validate accepted it")
			}
			_, err := Parse([]Patch{{Target: Target{Kind: "Service"}, Patch: "{}"}, tt.patch})
			var perr *Error
			if !errors.As(err, &perr) || perr.Index != 1 {
				t.Errorf("Parse err = %v, want an *Error of patches[1]", err)
			}
		})
	}
}

func TestApply_nilSetPatchesNothing(t *testing.T) {
	set, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, patched, err := set.Apply(fixtureObjects(t), "ns")
	if err != nil || !reflect.DeepEqual(got, fixtureObjects(t)) || slicesAnyTrue(patched) {
		t.Errorf("Apply = %v, %v, %v", got, patched, err)
	}
}
