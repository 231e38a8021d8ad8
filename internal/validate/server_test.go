package validate

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

const serverSchemaObjects = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  rolloutPlan: gradual
  selector: {matchLabels: {app: web}}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  ports: [{port: 80}]
  bogus: true
`

// The API server's schema decides for the kinds it defines: a field only the shipped schema
// knows is refused and one only the server knows passes. Kinds it does not define are checked
// against the shipped schema.
func TestCheck_serverSchemaDecidesForItsKinds(t *testing.T) {
	server, err := ParseServerSchema([]byte(fixture(t, "openapi-apps-v1.json")))
	if err != nil {
		t.Fatal(err)
	}
	if !server.Defines(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}) {
		t.Fatal("the server's schema does not define apps/v1 Deployment")
	}
	target := mustVersion(t, "1.37")
	withServer := Check(objectsOf(t, serverSchemaObjects), Options{Target: target, Server: map[schema.GroupVersion]*ServerSchema{{Group: "apps", Version: "v1"}: server}})
	want := []Finding{
		{Problem: InvalidField, Key: "Deployment.apps/web", Schema: ClusterSchema, Fields: []FieldError{{Path: ".spec.selector", Message: undeclaredField}}},
		{Problem: InvalidField, Key: "Service/web", Schema: ShippedSchema, Fields: []FieldError{{Path: ".spec.bogus", Message: undeclaredField}}},
	}
	if got := summarize(withServer); !reflect.DeepEqual(got, want) {
		t.Errorf("with the server's schema:\n got %+v\nwant %+v", got, want)
	}

	offline := Check(objectsOf(t, serverSchemaObjects), Options{Target: target})
	want[0] = Finding{Problem: InvalidField, Key: "Deployment.apps/web", Schema: ShippedSchema, Fields: []FieldError{{Path: ".spec.rolloutPlan", Message: undeclaredField}}}
	if got := summarize(offline); !reflect.DeepEqual(got, want) {
		t.Errorf("offline:\n got %+v\nwant %+v", got, want)
	}
}

// Offline, for a target newer than the shipped schema, a field the schema does not declare may
// be one the target added: a warning. A value of the wrong type is an error whatever the version.
func TestCheck_shippedSchemaOlderThanTheTargetWarnsOfUnknownFields(t *testing.T) {
	newer := Version{Major: LibraryVersion().Major, Minor: LibraryVersion().Minor + 1}
	findings := Check(objectsOf(t, serverSchemaObjects), Options{Target: newer})
	if len(findings) != 2 || !findings[0].Uncertain || findings[0].IsError() {
		t.Fatalf("an unknown field for Kubernetes %s = %+v, want an uncertain warning", newer, findings)
	}
	typeError := `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {replicas: two}
`
	findings = Check(objectsOf(t, typeError), Options{Target: newer})
	if len(findings) != 1 || findings[0].Uncertain || !findings[0].IsError() {
		t.Fatalf("a value of the wrong type for Kubernetes %s = %+v, want an error", newer, findings)
	}
	if findings = Check(objectsOf(t, serverSchemaObjects), Options{Target: LibraryVersion()}); findings[0].Uncertain {
		t.Errorf("an unknown field for the shipped schema's own version is uncertain: %+v", findings[0])
	}
}

// summarize keeps what the tests compare.
func summarize(findings []Finding) []Finding {
	out := make([]Finding, 0, len(findings))
	for _, f := range findings {
		out = append(out, Finding{Problem: f.Problem, Key: f.Key, Schema: f.Schema, Fields: f.Fields})
	}
	return out
}

// shapes are Boxes with one fault each (structured-merge-diff may stop at the first of
// several): an undeclared field behind allOf, behind array items and a definition referring to
// itself, and behind additionalProperties.
const shapes = `
apiVersion: shapes.gitlabk8s.test/v1
kind: Box
metadata: {name: spec}
spec: {size: 3, bogus: true}
---
apiVersion: shapes.gitlabk8s.test/v1
kind: Box
metadata: {name: items}
spec:
  items:
  - name: outer
    children: [{name: inner, children: [{name: deepest, colour: red}]}]
---
apiVersion: shapes.gitlabk8s.test/v1
kind: Box
metadata: {name: labels}
spec:
  labels:
    a: {text: one, weight: 2}
`

// A kind's definitions are reached through every form of reference a document uses (allOf,
// array items, additionalProperties, a definition referring to itself), and only those are
// parsed: a definition no checked kind reaches may be anything.
func TestCheck_serverSchemaParsesWhatTheKindsReach(t *testing.T) {
	server, err := ParseServerSchema([]byte(fixture(t, "openapi-refs.json")))
	if err != nil {
		t.Fatal(err)
	}
	gv := schema.GroupVersion{Group: "shapes.gitlabk8s.test", Version: "v1"}
	opts, errs := Options{Server: map[schema.GroupVersion]*ServerSchema{gv: server}}.Prepared(objectsOf(t, shapes))
	if len(errs) > 0 {
		t.Fatalf("prepared with errors: %v", errs)
	}
	want := []Finding{
		{Problem: InvalidField, Key: "Box.shapes.gitlabk8s.test/spec", Schema: ClusterSchema, Fields: []FieldError{{Path: ".spec.bogus", Message: undeclaredField}}},
		{Problem: InvalidField, Key: "Box.shapes.gitlabk8s.test/items", Schema: ClusterSchema, Fields: []FieldError{{Path: ".spec.items[0].children[0].children[0].colour", Message: undeclaredField}}},
		{Problem: InvalidField, Key: "Box.shapes.gitlabk8s.test/labels", Schema: ClusterSchema, Fields: []FieldError{{Path: ".spec.labels.a.weight", Message: undeclaredField}}},
	}
	if got := summarize(Check(objectsOf(t, shapes), opts)); !reflect.DeepEqual(got, want) {
		t.Errorf("findings:\n got %+v\nwant %+v", got, want)
	}
	// Unprepared options are prepared by Check, to the same findings.
	if got := summarize(Check(objectsOf(t, shapes), Options{Server: opts.Server})); !reflect.DeepEqual(got, want) {
		t.Errorf("findings, unprepared:\n got %+v\nwant %+v", got, want)
	}
}

// A kind whose definition refers to one the document lacks cannot be checked against it: the
// preparation says so, and the kind is left to the shipped schema (which knows no custom kind).
func TestCheck_serverSchemaThatCannotBeBuiltIsSaid(t *testing.T) {
	server, err := ParseServerSchema([]byte(fixture(t, "openapi-refs.json")))
	if err != nil {
		t.Fatal(err)
	}
	gv := schema.GroupVersion{Group: "shapes.gitlabk8s.test", Version: "v1"}
	crate := objectsOf(t, "apiVersion: shapes.gitlabk8s.test/v1\nkind: Crate\nmetadata: {name: crate}\nspec: {any: thing}\n")
	opts, errs := Options{Server: map[schema.GroupVersion]*ServerSchema{gv: server}}.Prepared(crate)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "test.shapes.v1.CrateSpec") || !strings.Contains(errs[0].Error(), gv.String()) {
		t.Fatalf("errors = %v; want one naming the group version and the missing definition", errs)
	}
	if got := Check(crate, opts); len(got) != 0 {
		t.Errorf("findings = %+v; want none", got)
	}
}

// Options prepared for some kinds of a group version leave the kinds they were not prepared
// for to the shipped schema, which still checks them.
func TestCheck_aKindNotPreparedForIsCheckedAgainstTheShippedSchema(t *testing.T) {
	server, err := ParseServerSchema([]byte(fixture(t, "openapi-apps-v1.json")))
	if err != nil {
		t.Fatal(err)
	}
	apps := schema.GroupVersion{Group: "apps", Version: "v1"}
	deployment := objectsOf(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 1}\n")
	opts, errs := Options{Server: map[schema.GroupVersion]*ServerSchema{apps: server}}.Prepared(deployment)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	server.kinds[apps.WithKind("StatefulSet")] = "io.k8s.api.apps.v1.Deployment" // as a document defining both would
	statefulSet := objectsOf(t, "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec: {bogus: true}\n")
	want := []Finding{{Problem: InvalidField, Key: "StatefulSet.apps/db", Schema: ShippedSchema, Fields: []FieldError{{Path: ".spec.bogus", Message: undeclaredField}}}}
	if got := summarize(Check(statefulSet, opts)); !reflect.DeepEqual(got, want) {
		t.Errorf("findings:\n got %+v\nwant %+v", got, want)
	}
	if _, err := ParseServerSchema([]byte(`{"components": {"schemas": {"a": {"x-kubernetes-group-version-kind": "not a list"}}}}`)); err == nil {
		t.Error("a definition whose kinds cannot be read was accepted")
	}
}

// The field check PreparedFor builds for kinds is the one objects of those kinds find built
// when they are prepared later.
func TestPreparedFor_buildsTheCheckObjectsOfThoseKindsTake(t *testing.T) {
	server, err := ParseServerSchema([]byte(fixture(t, "openapi-apps-v1.json")))
	if err != nil {
		t.Fatal(err)
	}
	apps := schema.GroupVersion{Group: "apps", Version: "v1"}
	opts := Options{Server: map[schema.GroupVersion]*ServerSchema{apps: server}}
	deployment := apps.WithKind("Deployment")
	if _, errs := opts.PreparedFor([]schema.GroupVersionKind{deployment, {Version: "v1", Kind: "Service"}}); len(errs) > 0 {
		t.Fatal(errs)
	}
	built := server.converters[server.kinds[deployment]]
	if built == nil || built.converter == nil {
		t.Fatalf("converters %v; want the Deployment's check built", slices.Collect(maps.Keys(server.converters)))
	}
	prepared, errs := opts.Prepared(objectsOf(t, serverSchemaObjects))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(server.converters) != 1 || server.converters[server.kinds[deployment]] != built {
		t.Fatalf("converters %v after Prepared; want the one PreparedFor built", slices.Collect(maps.Keys(server.converters)))
	}
	if fields := prepared.fields[deployment](map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"rolloutPlan": "x"}}); len(fields) != 0 {
		t.Fatalf("fields %v; want the server's schema, which declares rolloutPlan", fields)
	}
}
