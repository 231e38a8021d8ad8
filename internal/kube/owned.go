package kube

import (
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

var (
	// builtinTypes knows the schemas of the kinds built into Kubernetes,
	// including which lists are keyed maps and which are atomic. Building it
	// parses the whole built-in OpenAPI schema (tens of milliseconds and MBs),
	// so it happens on first use, not in every provider process Terraform
	// starts only to validate or read the schema.
	builtinTypes = sync.OnceValue(func() managedfields.TypeConverter {
		return applyconfigurations.NewTypeConverter(scheme.Scheme)
	})
	// deducedTypes treats every list as atomic: the best guess for custom
	// resources without a known schema.
	deducedTypes = managedfields.NewDeducedTypeConverter()
)

// OwnedFields returns the part of live the provider manages, as a plain
// object: the fields FieldManager applied, plus the fields at the paths of
// intended (the object as last applied, when known) even where another
// manager took them over since. apiVersion, kind, metadata.name and
// metadata.namespace are always included.
//
// Comparing the result with what the provider would apply shows exactly the
// drift in the provider's own fields: a quota changed with kubectl edit
// shows as that value; a label removed shows as missing. Fields only others
// set (defaults the API server fills in, a controller's annotations, status)
// never show.
func OwnedFields(live *unstructured.Unstructured, intended map[string]any) (map[string]any, error) {
	gvk := live.GroupVersionKind()
	converter := typeConverterFor(gvk)
	liveTyped, err := converter.ObjectToTyped(live, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("read %s %s against its schema: %w", gvk.Kind, live.GetName(), err)
	}

	fields := &fieldpath.Set{}
	for _, entry := range live.GetManagedFields() {
		if entry.Manager != FieldManager || entry.Operation != metav1.ManagedFieldsOperationApply || entry.Subresource != "" || entry.FieldsV1 == nil {
			continue
		}
		owned := &fieldpath.Set{}
		if err := owned.FromJSON(entry.FieldsV1.GetRawReader()); err != nil {
			return nil, fmt.Errorf("read managed fields of %s %s: %w", gvk.Kind, live.GetName(), err)
		}
		fields = fields.Union(owned)
	}
	if intended != nil {
		intendedTyped, err := converter.ObjectToTyped(&unstructured.Unstructured{Object: intended}, typed.AllowDuplicates)
		if err != nil {
			return nil, fmt.Errorf("read intended %s %s against its schema: %w", gvk.Kind, live.GetName(), err)
		}
		intendedFields, err := intendedTyped.ToFieldSet()
		if err != nil {
			return nil, fmt.Errorf("list the fields of intended %s %s: %w", gvk.Kind, live.GetName(), err)
		}
		fields = fields.Union(intendedFields)
	}

	out, _ := liveTyped.ExtractItems(fields.Leaves()).AsValue().Unstructured().(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	out["apiVersion"] = live.GetAPIVersion()
	out["kind"] = live.GetKind()
	metadata, _ := out["metadata"].(map[string]any)
	if metadata == nil {
		metadata = map[string]any{}
		out["metadata"] = metadata
	}
	metadata["name"] = live.GetName()
	if ns := live.GetNamespace(); ns != "" {
		metadata["namespace"] = ns
	}
	return out, nil
}

func typeConverterFor(gvk schema.GroupVersionKind) managedfields.TypeConverter {
	if scheme.Scheme.Recognizes(gvk) {
		return builtinTypes()
	}
	return deducedTypes
}
