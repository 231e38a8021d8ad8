package manifest

import (
	"strings"
	"testing"
)

func TestSplitDocuments_helmOutputIsFlattened(t *testing.T) {
	objs := loadFixture(t)
	var got []string
	for _, obj := range objs {
		got = append(got, obj["kind"].(string)+"/"+objectName(obj))
	}
	want := []string{
		"Secret/web-credentials",
		"ConfigMap/web-config",
		"Deployment/web",
		"ServiceAccount/deployer",
		"Role/deployer",
		"RoleBinding/deployer",
		"ConfigMap/web-dashboards",
		"ClusterRole/review-x-web-reader",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("objects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	dashboards := findObject(objs, "ConfigMap", "web-dashboards")
	if dashboards["apiVersion"] != "v1" {
		t.Errorf("item of a ConfigMapList got apiVersion %v, want the list's v1", dashboards["apiVersion"])
	}
	replicas := findObject(objs, "Deployment", "web")["spec"].(map[string]any)["replicas"]
	if _, ok := replicas.(int64); !ok {
		t.Errorf("replicas is %T, want int64 as in unstructured objects", replicas)
	}
}

func TestSplitDocuments_documentShapes(t *testing.T) {
	tests := []struct {
		desc  string
		text  string
		names []string
	}{
		{"empty text", "", nil},
		{"only comments", "# nothing\n---\n# still nothing\n", nil},
		{"no leading marker", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", []string{"a"}},
		{"comments before the first marker", "# header\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", []string{"a"}},
		{"null document", "---\nnull\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", []string{"a"}},
		{"marker with a comment", "--- # Source: x.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n--- \napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n", []string{"a", "b"}},
		{"windows line endings", "---\r\napiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: a\r\n---\r\napiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: b\r\n", []string{"a", "b"}},
		{"dashes inside a block scalar", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  x: |\n    ---\n    not a marker\n", []string{"a"}},
		{"not a marker", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  x: ---y\n", []string{"a"}},
		{"empty list", "apiVersion: v1\nkind: List\nitems: []\n", nil},
		{"list without items", "apiVersion: v1\nkind: List\n", nil},
		{"nested lists", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n  - {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n", []string{"a", "b"}},
		{"kind ending in List that is no list", "apiVersion: example.com/v1\nkind: AllowList\nmetadata: {name: a}\nspec: {}\n", []string{"a"}},
		{"byte order mark", "\ufeffapiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			objs, err := SplitDocuments(tt.text)
			if err != nil {
				t.Fatalf("SplitDocuments: %v", err)
			}
			var names []string
			for _, obj := range objs {
				names = append(names, objectName(obj))
			}
			if strings.Join(names, ",") != strings.Join(tt.names, ",") {
				t.Errorf("names = %v, want %v", names, tt.names)
			}
		})
	}
}

func TestSplitDocuments_errorsNameDocumentAndLine(t *testing.T) {
	const good = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
	tests := []struct {
		desc     string
		text     string
		wantErrs []string
	}{
		{
			desc:     "syntax error in the third document",
			text:     "---\n" + good + "---\n# empty\n---\n" + "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [a\n",
			wantErrs: []string{"document 3 (line 9)", "yaml: line 12:"},
		},
		{
			desc:     "bad indentation",
			text:     good + "---\napiVersion: v1\n kind: ConfigMap\n",
			wantErrs: []string{"document 2 (line 6)", "line 7"},
		},
		{
			desc:     "a list, not an object",
			text:     "---\n- a\n- b\n",
			wantErrs: []string{"document 1 (line 2)", "expected a Kubernetes object, got a list"},
		},
		{
			desc:     "a scalar",
			text:     good + "---\nhunter2\n",
			wantErrs: []string{"document 2 (line 6)", "got a string"},
		},
		{
			desc:     "no kind",
			text:     "apiVersion: v1\nmetadata: {name: a}\n",
			wantErrs: []string{"document 1 (line 1)", "object has no kind"},
		},
		{
			desc:     "no apiVersion",
			text:     "kind: ConfigMap\nmetadata: {name: a}\n",
			wantErrs: []string{"ConfigMap has no apiVersion"},
		},
		{
			desc:     "generateName",
			text:     "apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: migrate-}\n",
			wantErrs: []string{"Job has no metadata.name (generateName is not supported)"},
		},
		{
			desc:     "bad list item",
			text:     "---\n" + good + "---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n- {apiVersion: v1, kind: ConfigMap}\n",
			wantErrs: []string{"document 2 (line 7)", "item 2 of List: ConfigMap has no metadata.name"},
		},
		{
			desc:     "list item that is not an object",
			text:     "apiVersion: v1\nkind: List\nitems:\n- 42\n",
			wantErrs: []string{"item 1 of List: expected a Kubernetes object, got a number"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			_, err := SplitDocuments(tt.text)
			if err == nil {
				t.Fatal("SplitDocuments succeeded, want an error")
			}
			for _, want := range tt.wantErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

// FuzzSplitDocuments_renderedObjectsReadBack checks that whatever parses
// renders to YAML that parses back to the same object, so a plan never
// shows a difference the data does not have.
func FuzzSplitDocuments_renderedObjectsReadBack(f *testing.F) {
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: 'yes', y: '0777', z: \"1e3\"}\n")
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  x: |\n    line one\n    line two  \n  y: \"tab\\there\"\n")
	f.Add("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: {'n': ~, 'y': 1.5}}\n")
	f.Add("apiVersion: v1\nkind: Secret\nmetadata: {name: a}\ndata: {k: !!binary aGk=}\n")
	f.Fuzz(func(t *testing.T, text string) {
		objs, err := SplitDocuments(text)
		if err != nil {
			return
		}
		for _, obj := range objs {
			rendered, err := Render(obj)
			if err != nil {
				continue
			}
			again, err := SplitDocuments(rendered)
			if err != nil {
				t.Fatalf("rendered YAML does not parse: %v\n%s", err, rendered)
			}
			if len(again) != 1 {
				t.Fatalf("rendered YAML holds %d objects:\n%s", len(again), rendered)
			}
			if twice, _ := Render(again[0]); twice != rendered {
				t.Fatalf("render, parse, render changed the text:\n%s\nthen\n%s", rendered, twice)
			}
		}
	})
}
