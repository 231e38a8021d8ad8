package kube

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/drift"
)

// intendedTypes reads the intended object without a schema: maps field by field, every list
// as a whole. The fields our manager applied come from the object's managed fields, which the
// API server writes with the real schema (keyed list items included), so no built-in schema is
// parsed in the provider: that took 55 ms in every process that reads an environment.
var intendedTypes = managedfields.NewDeducedTypeConverter()

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
		intendedTyped, err := intendedTypes.ObjectToTyped(&unstructured.Unstructured{Object: intended}, typed.AllowDuplicates)
		if err != nil {
			return nil, fmt.Errorf("read intended %s %s against its schema: %w", gvk.Kind, live.GetName(), err)
		}
		intendedFields, err := intendedTyped.ToFieldSet()
		if err != nil {
			return nil, fmt.Errorf("list the fields of intended %s %s: %w", gvk.Kind, live.GetName(), err)
		}
		fields = fields.Union(intendedFields)
	}

	out, _ := drift.Extract(live.Object, fields.Leaves()).(map[string]any)
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
