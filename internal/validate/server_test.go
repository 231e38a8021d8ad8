package validate

import (
	"reflect"
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
