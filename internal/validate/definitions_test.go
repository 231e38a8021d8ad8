package validate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const widgetCR = "apiVersion: checks.gitlabk8s.io/v1\nkind: Widget\nmetadata: {name: w}\n"

func TestCheck_customResourcesAgainstGivenDefinitions(t *testing.T) {
	def, err := ParseDefinition(fixture(t, "crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Target: mustVersion(t, "1.37"), Definitions: []Object{def}}
	if findings := Check(objectsOf(t, widgetCR+"spec: {size: 3}\n"), opts); len(findings) > 0 {
		t.Fatalf("a valid custom resource was refused: %+v", findings)
	}
	findings := Check(objectsOf(t, widgetCR+`spec: {size: "three"}`+"\n"), opts)
	if len(findings) != 1 || findings[0].Schema != DefinitionSchema || len(findings[0].Fields) != 1 || findings[0].Fields[0].Path != ".spec.size" {
		t.Fatalf("want .spec.size refused by the given definition, got %+v", findings)
	}
	if findings := Check(objectsOf(t, widgetCR+`spec: {size: "three"}`+"\n"), Options{Target: opts.Target}); len(findings) > 0 {
		t.Fatalf("without the definition the kind is unknown and left alone, got %+v", findings)
	}
}

func TestCheck_theObjectsOwnDefinitionComesFirst(t *testing.T) {
	given, err := ParseDefinition(strings.Replace(fixture(t, "crd.yaml"), "size: {type: integer, minimum: 1}", "size: {type: string}", 1))
	if err != nil {
		t.Fatal(err)
	}
	findings := Check(objectsOf(t, fixture(t, "crd.yaml")+"\n---\n"+widgetCR+"spec: {size: 3}\n"), Options{Definitions: []Object{given}})
	if len(findings) > 0 {
		t.Fatalf("the given definition overrode the objects' own: %+v", findings)
	}
}

func TestParseDefinition(t *testing.T) {
	def, err := ParseDefinition(fixture(t, "crd.yaml"))
	if err != nil || def.Key != "CustomResourceDefinition.apiextensions.k8s.io/widgets.checks.gitlabk8s.io" {
		t.Fatalf("ParseDefinition = %q, %v", def.Key, err)
	}
	for name, text := range map[string]string{
		"not a definition": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		"two objects":      fixture(t, "crd.yaml") + "\n---\n" + fixture(t, "crd.yaml"),
		"no versions":      "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b}\nspec: {group: b, names: {kind: A}}\n",
		"not yaml":         "spec: [",
	} {
		if _, err := ParseDefinition(text); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestDefinedKindsAndServedAPIVersions(t *testing.T) {
	objs := objectsOf(t, fixture(t, "crd.yaml"))
	if diff := cmp.Diff(map[schema.GroupKind]bool{{Group: "checks.gitlabk8s.io", Kind: "Widget"}: true}, DefinedKinds(objs)); diff != "" {
		t.Errorf("DefinedKinds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"checks.gitlabk8s.io/v1", "checks.gitlabk8s.io/v1/Widget"}, ServedAPIVersions(objs)); diff != "" {
		t.Errorf("ServedAPIVersions (-want +got):\n%s", diff)
	}
}

func TestDroppedStoredVersions(t *testing.T) {
	crd := objectsOf(t, fixture(t, "crd.yaml"))[0].Object
	for _, tt := range []struct {
		stored, want []string
	}{
		{[]string{"v1"}, nil},
		{[]string{"v1alpha1", "v1"}, []string{"v1alpha1"}},
	} {
		got, err := DroppedStoredVersions(crd, tt.stored)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("stored %v (-want +got):\n%s", tt.stored, diff)
		}
	}
}
