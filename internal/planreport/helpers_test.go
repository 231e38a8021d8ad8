package planreport

import (
	"encoding/json"
	"strings"
	"testing"
)

// change is one resource_changes entry of `terraform show -json`.
type change struct {
	address, typ, name string
	actions            []string
	before, after      map[string]any
	afterUnknown       map[string]any
	beforeSensitive    map[string]any
	afterSensitive     map[string]any
	replacePaths       []any
}

// planDoc builds the JSON of a saved plan with the given changes.
func planDoc(t *testing.T, changes ...change) string {
	t.Helper()
	var rcs []any
	for _, c := range changes {
		// Terraform writes false for the marks of a value that is absent (before of a create,
		// after of a delete).
		beforeSensitive, afterSensitive, afterUnknown := orFalse(c.beforeSensitive, c.before), orFalse(c.afterSensitive, c.after), orFalse(c.afterUnknown, c.after)
		rcs = append(rcs, map[string]any{
			"address":       c.address,
			"mode":          "managed",
			"type":          c.typ,
			"name":          c.name,
			"provider_name": "registry.terraform.io/gitlabk8s/gitlabk8s",
			"change": map[string]any{
				"actions":          c.actions,
				"before":           c.before,
				"after":            c.after,
				"after_unknown":    afterUnknown,
				"before_sensitive": beforeSensitive,
				"after_sensitive":  afterSensitive,
				"replace_paths":    c.replacePaths,
			},
		})
	}
	doc, err := json.Marshal(map[string]any{"format_version": "1.2", "terraform_version": "1.11.0", "resource_changes": rcs})
	if err != nil {
		t.Fatal(err)
	}
	return string(doc)
}

// orFalse is marks as Terraform writes them: false for an absent value, an
// object otherwise.
func orFalse(marks, value map[string]any) any {
	switch {
	case value == nil && marks == nil:
		return false
	case marks == nil:
		return map[string]any{}
	}
	return marks
}

// release is a gitlabk8s_release change of its manifests alone.
func release(name string, actions []string, before, after map[string]string) change {
	c := change{address: "gitlabk8s_release." + name, typ: releaseType, name: name, actions: actions}
	if before != nil {
		c.before = map[string]any{"name": name, "manifests": before}
	}
	if after != nil {
		c.after = map[string]any{"name": name, "manifests": after}
	}
	return c
}

// render parses doc and renders it for environment review/feature.
func render(t *testing.T, doc string, opts Options) string {
	t.Helper()
	plan, err := Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if opts.Environment == "" {
		opts.Environment = "review/feature"
	}
	return Render(plan, opts)
}

const configMapV1 = `apiVersion: v1
data:
  healthz: ok
  index.html: |
    <!doctype html>
    <title>demo</title>
    <p>Hello from the first commit</p>
kind: ConfigMap
metadata:
  labels:
    app.kubernetes.io/instance: app
  name: app-content
  namespace: review-1
`

var configMapV2 = strings.Replace(configMapV1, "the first commit", "the second commit", 1)

const deploymentV1 = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: review-1
spec:
  replicas: 1
  template:
    spec:
      containers:
      - env:
        - name: GREETING
          value: hello
        image: nginx:1.27-alpine
        name: app
      - image: busybox:1.36
        name: sidecar
`

const secretV1 = `apiVersion: v1
data:
  apiKey: (sensitive value hmac:0123456789ab)
kind: Secret
metadata:
  name: app
type: Opaque
`
