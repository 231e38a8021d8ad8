package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/schemamutation"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// ServerSchema is the schema of one group version's kinds as an API server publishes it in its
// OpenAPI v3 document (/openapi/v3/api/v1, /openapi/v3/apis/<group>/<version>): the built-in
// kinds as that server's Kubernetes version has them, and the custom resources of the
// definitions installed there.
//
// A document describes every kind of its group version (api/v1's is 1.6 MB), where a release
// holds a few: the definitions are parsed when a kind is first checked, only those its schema
// reaches, once per set of kinds checked together.
type ServerSchema struct {
	// definitions holds each definition's JSON, or, for a schema read by its index
	// (ReadIndexedServerSchema), read gives the bytes at the offsets at names.
	definitions map[string]json.RawMessage
	read        DocumentRange
	at          map[string][2]int
	// kinds maps each kind to the name of its definition.
	kinds map[schema.GroupVersionKind]string

	mu         sync.Mutex
	converters map[string]*converterEntry
}

type converterEntry struct {
	once      sync.Once
	converter managedfields.TypeConverter
	err       error
}

// kindsExtension names the kinds a definition is the schema of.
const kindsExtension = "x-kubernetes-group-version-kind"

// definitionRef is how an OpenAPI v3 document refers to one of its definitions.
const definitionRef = "#/components/schemas/"

// ParseServerSchema reads an OpenAPI v3 document (JSON) of one group version: which kinds it
// defines, and each definition as it is, to parse when a kind is checked.
func ParseServerSchema(doc []byte) (*ServerSchema, error) {
	var openapi struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &openapi); err != nil {
		return nil, fmt.Errorf("parse OpenAPI v3 document: %w", err)
	}
	if len(openapi.Components.Schemas) == 0 {
		return nil, errors.New("parse OpenAPI v3 document: it has no schemas")
	}
	kinds := map[schema.GroupVersionKind]string{}
	for name, raw := range openapi.Components.Schemas {
		if !bytes.Contains(raw, []byte(kindsExtension)) {
			continue // most definitions are of fields, not kinds: not decoded here
		}
		var definition struct {
			Kinds []struct{ Group, Version, Kind string } `json:"x-kubernetes-group-version-kind"`
		}
		if err := json.Unmarshal(raw, &definition); err != nil {
			return nil, fmt.Errorf("parse OpenAPI v3 document: definition %s: %w", name, err)
		}
		for _, k := range definition.Kinds {
			if k.Version != "" && k.Kind != "" {
				kinds[schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}] = name
			}
		}
	}
	return &ServerSchema{definitions: openapi.Components.Schemas, kinds: kinds, converters: map[string]*converterEntry{}}, nil
}

// Defines reports whether the schema holds the kind of gvk.
func (s *ServerSchema) Defines(gvk schema.GroupVersionKind) bool {
	if s == nil {
		return false
	}
	_, ok := s.kinds[gvk]
	return ok
}

// converter returns the type converter of the definitions that kinds' definitions reach,
// built on the first call for that set of kinds; concurrent callers wait for that one.
func (s *ServerSchema) converter(kinds []schema.GroupVersionKind) (managedfields.TypeConverter, error) {
	roots := make([]string, 0, len(kinds))
	for _, gvk := range kinds {
		if name, ok := s.kinds[gvk]; ok {
			roots = append(roots, name)
		}
	}
	slices.Sort(roots)
	roots = slices.Compact(roots)
	key := strings.Join(roots, " ")
	s.mu.Lock()
	e, ok := s.converters[key]
	if !ok {
		e = &converterEntry{}
		s.converters[key] = e
	}
	s.mu.Unlock()
	e.once.Do(func() { e.converter, e.err = s.build(roots) })
	return e.converter, e.err
}

// build parses the definitions roots reach through their references, and builds their type
// converter.
func (s *ServerSchema) build(roots []string) (managedfields.TypeConverter, error) {
	reached := map[string]*spec.Schema{}
	queue := slices.Clone(roots)
	// The definitions each one refers to join the queue.
	refs := schemamutation.Walker{SchemaCallback: schemamutation.SchemaCallBackNoop, RefCallback: func(ref *spec.Ref) *spec.Ref {
		if name, ok := strings.CutPrefix(ref.String(), definitionRef); ok {
			queue = append(queue, name)
		}
		return ref
	}}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if _, done := reached[name]; done {
			continue
		}
		raw, ok, err := s.definition(name)
		if err != nil {
			return nil, fmt.Errorf("build the schema of the OpenAPI v3 document: definition %s: %w", name, err)
		}
		if !ok {
			return nil, fmt.Errorf("build the schema of the OpenAPI v3 document: %s refers to %s, which it does not define", roots, name)
		}
		var parsed spec.Schema
		if err := parsed.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("build the schema of the OpenAPI v3 document: definition %s: %w", name, err)
		}
		reached[name] = &parsed
		refs.WalkSchema(&parsed)
	}
	converter, err := managedfields.NewTypeConverter(reached, false)
	if err != nil {
		return nil, fmt.Errorf("build the schema of the OpenAPI v3 document: %w", err)
	}
	return converter, nil
}

// definition returns the JSON of the definition name, and whether the document defines it.
func (s *ServerSchema) definition(name string) (json.RawMessage, bool, error) {
	if s.read == nil {
		raw, ok := s.definitions[name]
		return raw, ok, nil
	}
	at, ok := s.at[name]
	if !ok {
		return nil, false, nil
	}
	b, err := s.read(at[0], at[1])
	if err != nil {
		return nil, true, err
	}
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, true, fmt.Errorf("not a JSON object at bytes %d to %d of the document", at[0], at[1])
	}
	return b, true, nil
}

// checker returns the field check of the server's schema for objects of kinds checked
// together, or the error that kept it from being built.
func (s *ServerSchema) checker(kinds []schema.GroupVersionKind) (func(obj map[string]any) []FieldError, error) {
	converter, err := s.converter(kinds)
	if err != nil {
		return nil, err
	}
	return func(obj map[string]any) []FieldError {
		_, err := converter.ObjectToTyped(&unstructured.Unstructured{Object: obj}, typed.AllowDuplicates)
		return fieldErrorsOf(err)
	}, nil
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
