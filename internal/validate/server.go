package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/spec3"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// ServerSchema is the schema of one group version's kinds as an API server publishes it in its
// OpenAPI v3 document (/openapi/v3/api/v1, /openapi/v3/apis/<group>/<version>): the built-in
// kinds as that server's Kubernetes version has them, and the custom resources of the
// definitions installed there.
type ServerSchema struct {
	converter managedfields.TypeConverter
	kinds     map[schema.GroupVersionKind]bool
}

// ParseServerSchema reads an OpenAPI v3 document (JSON) of one group version.
func ParseServerSchema(doc []byte) (*ServerSchema, error) {
	var openapi spec3.OpenAPI
	if err := json.Unmarshal(doc, &openapi); err != nil {
		return nil, fmt.Errorf("parse OpenAPI v3 document: %w", err)
	}
	if openapi.Components == nil || len(openapi.Components.Schemas) == 0 {
		return nil, errors.New("parse OpenAPI v3 document: it has no schemas")
	}
	kinds := map[schema.GroupVersionKind]bool{}
	for _, s := range openapi.Components.Schemas {
		for _, gvk := range groupVersionKinds(s.Extensions["x-kubernetes-group-version-kind"]) {
			kinds[gvk] = true
		}
	}
	converter, err := managedfields.NewTypeConverter(openapi.Components.Schemas, false)
	if err != nil {
		return nil, fmt.Errorf("build the schema of the OpenAPI v3 document: %w", err)
	}
	return &ServerSchema{converter: converter, kinds: kinds}, nil
}

// groupVersionKinds reads the x-kubernetes-group-version-kind extension, as decoded from JSON.
func groupVersionKinds(ext any) []schema.GroupVersionKind {
	list, _ := ext.([]any)
	out := make([]schema.GroupVersionKind, 0, len(list))
	for _, item := range list {
		m, _ := item.(map[string]any)
		group, _ := m["group"].(string)
		version, _ := m["version"].(string)
		kind, _ := m["kind"].(string)
		if version != "" && kind != "" {
			out = append(out, schema.GroupVersionKind{Group: group, Version: version, Kind: kind})
		}
	}
	return out
}

// Defines reports whether the schema holds the kind of gvk.
func (s *ServerSchema) Defines(gvk schema.GroupVersionKind) bool {
	return s != nil && s.kinds[gvk]
}

// check returns the fields of obj that the server's schema refuses, as checkBuiltin does for
// the shipped schema.
func (s *ServerSchema) check(obj map[string]any) []FieldError {
	_, err := s.converter.ObjectToTyped(&unstructured.Unstructured{Object: obj}, typed.AllowDuplicates)
	return fieldErrorsOf(err)
}

// fieldErrorsOf turns structured-merge-diff's validation errors into field errors, by path.
func fieldErrorsOf(err error) []FieldError {
	var verrs typed.ValidationErrors
	if err == nil || !errors.As(err, &verrs) {
		return nil
	}
	fields := make([]FieldError, 0, len(verrs))
	for _, v := range verrs {
		fields = append(fields, FieldError{Path: v.Path, Message: v.ErrorMessage})
	}
	sort.Slice(fields, func(i, j int) bool { return fields[i].Path < fields[j].Path })
	return fields
}
