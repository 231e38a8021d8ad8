package validate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheck_commonObjectsPass(t *testing.T) {
	objs := objectsOf(t, fixture(t, "valid.yaml")+"\n---\n"+fixture(t, "crd.yaml"))
	if findings := Check(objs, Options{Target: mustVersion(t, "v1.37.2")}); len(findings) > 0 {
		t.Fatalf("valid objects refused: %+v", findings)
	}
}

func TestCheck_apiVersions(t *testing.T) {
	tests := []struct {
		name, target, doc string
		want              Finding
	}{{
		name: "removed, still in k8s.io/api", target: "1.30",
		doc:  "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: web}\n",
		want: Finding{Problem: RemovedAPI, Lifecycle: &Lifecycle{Introduced: Version{1, 1}, Deprecated: Version{1, 8}, Removed: Version{1, 16}, Replacement: "apps/v1 Deployment"}},
	}, {
		name: "removed, no longer in k8s.io/api, group version still there", target: "1.30",
		doc:  "apiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata: {name: restricted}\n",
		want: Finding{Problem: RemovedAPI, Lifecycle: &Lifecycle{Removed: Version{1, 25}, Unlisted: true}},
	}, {
		name: "removed, group version gone, kind served elsewhere", target: "1.37",
		doc:  "apiVersion: batch/v2alpha1\nkind: CronJob\nmetadata: {name: tick}\n",
		want: Finding{Problem: RemovedAPI, Lifecycle: &Lifecycle{Removed: Version{1, 37}, Replacement: "batch/v1 CronJob", Unlisted: true}},
	}, {
		name: "gone from k8s.io/api, target older than the library", target: "1.20",
		doc:  "apiVersion: batch/v2alpha1\nkind: CronJob\nmetadata: {name: tick}\n",
		want: Finding{Problem: DeprecatedAPI, Lifecycle: &Lifecycle{Removed: Version{1, 37}, Replacement: "batch/v1 CronJob", Unlisted: true}},
	}, {
		name: "deprecated", target: "1.23",
		doc:  "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec: {minAvailable: 1}\n",
		want: Finding{Problem: DeprecatedAPI, Lifecycle: &Lifecycle{Introduced: Version{1, 5}, Deprecated: Version{1, 21}, Removed: Version{1, 25}, Replacement: "policy/v1 PodDisruptionBudget"}},
	}, {
		name: "not yet served", target: "1.30",
		doc:  "apiVersion: resource.k8s.io/v1beta2\nkind: ResourceClaim\nmetadata: {name: gpu}\n",
		want: Finding{Problem: NotYetServedAPI, Lifecycle: &Lifecycle{Introduced: Version{1, 33}, Deprecated: Version{1, 36}, Removed: Version{1, 39}}},
	}, {
		name: "replacement tagged with its list kind", target: "1.25",
		doc:  "apiVersion: networking.k8s.io/v1beta1\nkind: IngressClass\nmetadata: {name: nginx}\n",
		want: Finding{Problem: RemovedAPI, Lifecycle: &Lifecycle{Introduced: Version{1, 18}, Deprecated: Version{1, 19}, Removed: Version{1, 22}, Replacement: "networking.k8s.io/v1 IngressClass"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			findings := Check(objectsOf(t, tt.doc), Options{Target: mustVersion(t, tt.target)})
			if len(findings) != 1 {
				t.Fatalf("want one finding, got %+v", findings)
			}
			got := findings[0]
			if got.Key == "" || got.Source == "" || got.APIVersion == "" || got.Kind == "" {
				t.Errorf("finding does not name its object: %+v", got)
			}
			got.Key, got.Source, got.APIVersion, got.Kind = "", "", "", ""
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("finding (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheck_servedAPIsPass(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec: {minAvailable: 1}\n", // 1.20: before its deprecation
		"apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: web}\n",                                  // deprecated 1.14, served until 1.22
	} {
		if findings := Check(objectsOf(t, doc), Options{Target: mustVersion(t, "1.13")}); len(findings) > 0 {
			t.Errorf("%s: served at 1.13, got %+v", doc, findings)
		}
	}
}

func TestCheck_builtinFields(t *testing.T) {
	doc := `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: "two"
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      contianers: [{name: web, image: nginx}]
      containers: [{name: web, image: nginx, ports: [{containerPort: 80}]}]
`
	findings := Check(objectsOf(t, doc), Options{Target: mustVersion(t, "1.37")})
	if len(findings) != 1 || findings[0].Problem != InvalidField {
		t.Fatalf("want one InvalidField finding, got %+v", findings)
	}
	var paths []string
	for _, f := range findings[0].Fields {
		paths = append(paths, f.Path+": "+f.Message)
	}
	want := []string{
		".spec.replicas: expected numeric (int or float), got string",
		".spec.template.spec.contianers: field not declared in schema",
	}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	if findings[0].Key != "Deployment.apps/web" || findings[0].Source != "checks/templates/test.yaml" {
		t.Errorf("finding names %q from %q", findings[0].Key, findings[0].Source)
	}
}

func TestCheck_customResourcesAgainstTheirCRD(t *testing.T) {
	crd := fixture(t, "crd.yaml")
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"valid", "spec: {size: 3, color: red, extra: {anything: [1, 2]}}", nil},
		{"unknown field", "spec: {size: 3, colour: red}", []string{".spec.colour: field not declared in schema"}},
		{"wrong type", `spec: {size: "three"}`, []string{`.spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`}},
		{"not in enum", "spec: {size: 3, color: green}", []string{`.spec.color: Unsupported value: "green": supported values: "red", "blue"`}},
		{"required missing", "spec: {color: red}", []string{".spec.size: Required value"}},
		// What follows was checked against the API server: a server-side apply with
		// fieldValidation=Strict and dryRun=All refuses or accepts each the same way.
		{"required and defaulted", "spec: {size: 3}", nil},
		{"null replaced by its default", "spec: {size: 3, mode: null}", nil},
		{"null without a default", "spec: {size: 3, note: null}", []string{`.spec.note: Invalid value: "null": spec.note in body must be of type string: "null" (a null)`}},
		{"the string null where a number is wanted", `spec: {size: "null"}`, []string{`.spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`}},
		{"duplicate key of a map list", "spec: {size: 3, ports: [{name: a, port: 1}, {name: a, port: 2}]}", []string{`.spec.ports[1]: Duplicate value: {"name":"a"}`}},
		{"unknown metadata field", "spec: {size: 3}\nmetadata: {name: w, lables: {a: b}}", []string{".metadata.lables: field not declared in schema"}},
		{"annotation not a string", "spec: {size: 3}\nmetadata: {name: w, annotations: {x: 1}}", []string{".metadata: json: cannot unmarshal number into Go struct field ObjectMeta.annotations of type string"}},
		{"unknown field of an embedded resource's metadata", "spec: {size: 3, template: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, lables: {a: b}}}}", []string{".spec.template.metadata.lables: field not declared in schema"}},
		{"embedded resource's annotation not a string", "spec: {size: 3, template: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, annotations: {a: 1}}}}", []string{`.spec.template.metadata: Invalid value: {"annotations":{"a":1},"name":"c"}: json: cannot unmarshal number into Go struct field ObjectMeta.annotations of type string`}},
		{"embedded resource without apiVersion", "spec: {size: 3, template: {kind: ConfigMap, metadata: {name: c}}}", []string{".spec.template.apiVersion: Required value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := crd + "\n---\napiVersion: checks.gitlabk8s.io/v1\nkind: Widget\n" + tt.doc + "\n"
			if !strings.Contains(tt.doc, "\nmetadata:") {
				doc += "metadata: {name: w}\n"
			}
			findings := Check(objectsOf(t, doc), Options{Target: mustVersion(t, "1.37")})
			var got []string
			for _, f := range findings {
				if f.Kind != "Widget" || f.Problem != InvalidField {
					t.Errorf("unexpected finding %+v", f)
				}
				for _, fe := range f.Fields {
					line := fe.Path + ": " + fe.Message
					if fe.Null {
						line += " (a null)"
					}
					got = append(got, line)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheck_unknownKindsAreLeftAlone(t *testing.T) {
	doc := "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: web}\nspec: {anything: goes}\n"
	if findings := Check(objectsOf(t, doc), Options{Target: mustVersion(t, "1.37")}); len(findings) > 0 {
		t.Fatalf("a kind without a known schema was checked: %+v", findings)
	}
}

func TestCheck_removedAPIIsNotCheckedFurther(t *testing.T) {
	doc := "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: \"two\"}\n"
	findings := Check(objectsOf(t, doc), Options{Target: mustVersion(t, "1.37")})
	if len(findings) != 1 || findings[0].Problem != RemovedAPI {
		t.Fatalf("want only the removal, got %+v", findings)
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{"v1.37.2": {1, 37}, "1.30": {1, 30}, "v1.29.4-gke.100": {1, 29}} {
		if got, err := ParseVersion(in); err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseVersion("latest"); err == nil || !strings.Contains(err.Error(), "major.minor") {
		t.Errorf("ParseVersion(latest) = %v", err)
	}
}

func TestLibraryVersion(t *testing.T) {
	if v := LibraryVersion(); !v.AtLeast(Version{1, 37}) {
		t.Errorf("LibraryVersion() = %v, want the version of k8s.io/api in go.mod or newer", v)
	}
}

func TestCheck_unknownTargetChecksFieldsOnly(t *testing.T) {
	doc := "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: web}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndatta: {}\n"
	findings := Check(objectsOf(t, doc), Options{})
	if len(findings) != 1 || findings[0].Problem != InvalidField || findings[0].Kind != "ConfigMap" {
		t.Fatalf("want only the ConfigMap's field, got %+v", findings)
	}
}
