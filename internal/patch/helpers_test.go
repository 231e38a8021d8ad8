package patch

import (
	"fmt"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// deployment returns the fixture Deployment as YAML with replicas, more metadata, more of the
// pod's spec and more of the web container's fields, each a flow mapping's entries.
func deployment(metadata string, replicas int, podSpec, web string) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}%s}
spec:
  replicas: %d
  template:
    spec:%s
      containers:
      - {name: web, image: "web:1"%s}
      - {name: sidecar, image: "sidecar:1"}`, prefixed(", ", metadata), replicas, prefixed("\n      ", podSpec), prefixed(", ", web))
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

var deploymentYAML = deployment("", 1, "", "")

const serviceYAML = `
apiVersion: v1
kind: Service
metadata: {name: web, labels: {app: other}}
spec: {ports: [{port: 80}]}`

const secretYAML = `
apiVersion: v1
kind: Secret
metadata: {name: web, namespace: other}
stringData: {token: abc}`

// fixtureObjects returns a Deployment, a Service and a Secret in another namespace.
func fixtureObjects(t *testing.T) []map[string]any {
	t.Helper()
	return []map[string]any{object(t, deploymentYAML), object(t, serviceYAML), object(t, secretYAML)}
}

// object parses doc, nil for "".
func object(t *testing.T, doc string) map[string]any {
	t.Helper()
	if doc == "" {
		return nil
	}
	doc2, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(doc2, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func slicesAnyTrue(bs []bool) bool {
	for _, b := range bs {
		if b {
			return true
		}
	}
	return false
}
