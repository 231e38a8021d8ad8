package validate

import (
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// builtinTypes converts built-in objects to their structured-merge-diff types, validating
// them on the way: the schema is the one client-go generates from Kubernetes' OpenAPI for
// server-side apply. Parsing it takes a moment, once per process, on first use.
var builtinTypes = sync.OnceValue(func() managedfields.TypeConverter {
	return applyconfigurations.NewTypeConverter(builtinScheme())
})

// checkBuiltin returns the fields of obj that the schema of its built-in kind refuses:
// fields not declared and values of the wrong type. Kinds without a schema (custom
// resources) give nothing.
func checkBuiltin(obj map[string]any) []FieldError {
	u := &unstructured.Unstructured{Object: obj}
	if _, err := builtinScheme().ToOpenAPIDefinitionName(u.GroupVersionKind()); err != nil {
		return nil
	}
	// Duplicate keys in a keyed list (two env entries of one name) are accepted by the API
	// server, with a warning; only what it refuses is reported.
	_, err := builtinTypes().ObjectToTyped(u, typed.AllowDuplicates)
	fields := fieldErrorsOf(err)
	for _, f := range fields {
		if strings.HasPrefix(f.Message, "schema error: no type found matching") {
			// A built-in kind client-go has no apply schema for (CustomResourceDefinition).
			return nil
		}
	}
	return fields
}
