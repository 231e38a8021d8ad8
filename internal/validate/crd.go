package validate

import (
	"context"
	"slices"
	"sort"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// crdVersion is the schema of one served version of a CustomResourceDefinition.
type crdVersion struct {
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
}

// crdSet holds the schemas of the CustomResourceDefinitions among the objects checked (or
// given in Options.Definitions), by group, version and kind. A version without a schema accepts anything.
type crdSet map[schema.GroupVersionKind]*crdVersion

// crdSchemas collects the schemas of the apiextensions.k8s.io/v1 CustomResourceDefinitions
// in objs. A definition that does not convert is skipped: the API server will refuse it on
// its own terms, and its resources are then left unchecked.
func crdSchemas(objs []Object) crdSet {
	set := crdSet{}
	for _, o := range objs {
		crd, err := definitionOf(o.Object)
		if err != nil {
			continue
		}
		for _, v := range crd.Spec.Versions {
			gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
			set[gvk] = compileCRDVersion(v.Schema)
		}
	}
	return set
}

func compileCRDVersion(v *apiextensionsv1.CustomResourceValidation) *crdVersion {
	if v == nil || v.OpenAPIV3Schema == nil {
		return &crdVersion{}
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.OpenAPIV3Schema, &internal, nil); err != nil {
		return &crdVersion{}
	}
	out := &crdVersion{}
	if s, err := structuralschema.NewStructural(&internal); err == nil {
		out.structural = s
	}
	if validator, _, err := apiservervalidation.NewSchemaValidator(&internal); err == nil {
		out.validator = validator
	}
	return out
}

func (s crdSet) defines(apiVersion, kind string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return false
	}
	_, ok := s[gv.WithKind(kind)]
	return ok
}

// check validates a custom resource as the API server does a server-side apply that creates it
// under strict field validation: its metadata as ObjectMeta, the fields the schema does not
// declare and the metadata of embedded resources (decode), then, with the schema's defaults
// filled in, the fields against the schema (validate).
func (s crdSet) check(obj map[string]any) []FieldError {
	gv, _ := schema.ParseGroupVersion(stringField(obj, "apiVersion"))
	v := s[gv.WithKind(stringField(obj, "kind"))]
	decoded, fields, ok := v.decode(obj)
	if ok {
		fields = append(fields, v.validate(decoded)...)
	}
	// An embedded resource's malformed metadata is refused by both its coercion and its
	// validation, in the same words.
	sort.Slice(fields, func(i, j int) bool {
		if fields[i].Path != fields[j].Path {
			return fields[i].Path < fields[j].Path
		}
		return fields[i].Message < fields[j].Message
	})
	return slices.Compact(fields)
}

// decode does to a copy of obj what the API server does to a custom resource it decodes: its
// metadata read as ObjectMeta (unknown fields refused), the fields the schema does not declare
// pruned, the metadata of embedded resources coerced. It returns the copy and what it refused;
// ok is false when the metadata cannot be read at all, which the server refuses alone.
func (v *crdVersion) decode(obj map[string]any) (decoded map[string]any, fields []FieldError, ok bool) {
	undeclared := func(paths []string) {
		for _, p := range paths {
			fields = append(fields, FieldError{Path: "." + p, Message: undeclaredField})
		}
	}
	decoded = runtime.DeepCopyJSON(obj)
	meta, found, unknown, err := objectmeta.GetObjectMetaWithOptions(decoded, objectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return nil, []FieldError{{Path: ".metadata", Message: err.Error()}}, false
	}
	undeclared(unknown)
	if v.structural != nil {
		opts := structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}
		undeclared(pruning.PruneWithOptions(decoded, v.structural, true, opts))
		e, unknown := objectmeta.CoerceWithOptions(nil, decoded, v.structural, false, objectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
		if e != nil {
			fields = append(fields, fieldErrorOf(e))
		}
		undeclared(unknown)
	}
	if found {
		if err := objectmeta.SetObjectMeta(decoded, meta); err != nil {
			fields = append(fields, FieldError{Path: ".metadata", Message: err.Error()})
		}
	}
	return decoded, fields, true
}

// validate fills in the schema's defaults (a default also replaces a null) and checks the
// decoded object as the API server's strategy does: the fields against the schema, the
// metadata of embedded resources, and the lists keyed as maps or sets.
func (v *crdVersion) validate(decoded map[string]any) []FieldError {
	var errs field.ErrorList
	if v.structural != nil {
		defaulting.Default(decoded, v.structural)
	}
	if v.validator != nil {
		errs = append(errs, apiservervalidation.ValidateCustomResource(nil, decoded, v.validator)...)
	}
	if v.structural != nil {
		errs = append(errs, objectmeta.Validate(context.Background(), nil, decoded, v.structural, false)...)
		errs = append(errs, listtype.ValidateListSetsAndMaps(nil, v.structural, decoded)...)
	}
	fields := make([]FieldError, 0, len(errs))
	for _, e := range errs {
		fields = append(fields, fieldErrorOf(e))
	}
	return fields
}

func fieldErrorOf(e *field.Error) FieldError {
	path := e.Field
	if path != "" && !strings.HasPrefix(path, ".") && !strings.HasPrefix(path, "[") {
		path = "." + path
	}
	// The schema validator words a null where a type is wanted as `must be of type object: "null"`.
	null := (e.Type == field.ErrorTypeTypeInvalid || e.Type == field.ErrorTypeInvalid) && strings.HasSuffix(e.Detail, `: "null"`)
	return FieldError{Path: path, Message: e.ErrorBody(), Null: null}
}

func stringField(obj map[string]any, name string) string {
	s, _ := obj[name].(string)
	return s
}
