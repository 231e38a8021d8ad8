package drift

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// Extract returns the parts of v at the paths of set, in v's own shape: a member of set
// (a leaf path) is copied whole, a child set is extracted recursively. It needs no schema: the
// managed fields the API server records already name list items by key (`k:{"name":"web"}`),
// value (`v:"a"`) or index, so the object itself is enough to follow them. The result is a copy:
// changing it leaves v as it was. It gives what typed.TypedValue.ExtractItems gives without
// parsing the built-in OpenAPI schema, which takes tens of milliseconds in every provider process
// that reads an environment.
func Extract(v any, set *fieldpath.Set) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for pe := range set.Members.All() {
			if pe.FieldName == nil {
				continue
			}
			if x, ok := t[*pe.FieldName]; ok {
				out[*pe.FieldName] = manifest.DeepCopy(x)
			}
		}
		for pe := range set.Children.All() {
			if pe.FieldName == nil {
				continue
			}
			x, ok := t[*pe.FieldName]
			if _, whole := out[*pe.FieldName]; !ok || whole {
				continue
			}
			child, _ := set.Children.Get(pe)
			out[*pe.FieldName] = Extract(x, child)
		}
		return out
	case []any:
		picked := map[int]any{}
		for pe := range set.Members.All() {
			for _, i := range matchingItems(t, pe) {
				picked[i] = manifest.DeepCopy(t[i])
			}
		}
		for pe := range set.Children.All() {
			child, _ := set.Children.Get(pe)
			for _, i := range matchingItems(t, pe) {
				if set.Members.Has(pe) {
					continue // the whole item is already picked
				}
				picked[i] = Extract(t[i], child)
			}
		}
		out := make([]any, 0, len(picked))
		for _, i := range slices.Sorted(maps.Keys(picked)) {
			out = append(out, picked[i])
		}
		return out
	default:
		return v
	}
}

// matchingItems returns the indexes of the items of list that pe selects.
func matchingItems(list []any, pe fieldpath.PathElement) []int {
	var out []int
	for i, item := range list {
		switch {
		case pe.Index != nil:
			if *pe.Index == i {
				out = append(out, i)
			}
		case pe.Value != nil:
			if value.Equals(value.NewValueInterface(item), *pe.Value) {
				out = append(out, i)
			}
		case pe.Key != nil:
			m, ok := item.(map[string]any)
			if !ok {
				continue
			}
			matches := true
			for _, f := range *pe.Key {
				x, ok := m[f.Name]
				if !ok || !value.Equals(value.NewValueInterface(x), f.Value) {
					matches = false
					break
				}
			}
			if matches {
				out = append(out, i)
			}
		}
	}
	return out
}

// ManagedField is one entry of an object's metadata.managedFields.
type ManagedField struct {
	Manager     string
	Operation   string
	Subresource string
	Fields      *fieldpath.Set
}

// managedFieldsOf reads the managedFields of an object as the API server returns it (a
// JSON-compatible map), of the managers whose name wanted accepts: the field sets of the
// others, such as the provider's own, which owns every field it applies, are not read.
func managedFieldsOf(obj map[string]any, wanted func(manager string) bool) ([]ManagedField, error) {
	metadata, _ := obj["metadata"].(map[string]any)
	entries, _ := metadata["managedFields"].([]any)
	out := make([]ManagedField, 0, len(entries))
	for _, e := range entries {
		entry, _ := e.(map[string]any)
		mf := ManagedField{Fields: &fieldpath.Set{}}
		mf.Manager, _ = entry["manager"].(string)
		if !wanted(mf.Manager) {
			continue
		}
		mf.Operation, _ = entry["operation"].(string)
		mf.Subresource, _ = entry["subresource"].(string)
		if fields, ok := entry["fieldsV1"]; ok && fields != nil {
			raw, err := json.Marshal(fields)
			if err != nil {
				return nil, fmt.Errorf("managed fields of %s: %w", mf.Manager, err)
			}
			if err := mf.Fields.FromJSON(bytes.NewReader(raw)); err != nil {
				return nil, fmt.Errorf("managed fields of %s: %w", mf.Manager, err)
			}
		}
		out = append(out, mf)
	}
	return out, nil
}

// ownsWhole reports whether one of sets owns the path element pe (of any of pes) as a whole:
// a member with no children of its own. A member that has children (FieldsV1's "." beside
// fields) owns only the element's existence and those fields.
func ownsWhole(sets []*fieldpath.Set, pes ...fieldpath.PathElement) bool {
	for _, s := range sets {
		for _, pe := range pes {
			if _, hasChildren := s.Children.Get(pe); s.Members.Has(pe) && !hasChildren {
				return true
			}
		}
	}
	return false
}

// narrow steps sets into the child path element pe (any of pes).
func narrow(sets []*fieldpath.Set, pes ...fieldpath.PathElement) []*fieldpath.Set {
	var out []*fieldpath.Set
	for _, s := range sets {
		for _, pe := range pes {
			if child, ok := s.Children.Get(pe); ok {
				out = append(out, child)
			}
		}
	}
	return out
}

// itemElements returns the path elements of sets that select item i of list: by key, by
// value or by index, as the API server names list items.
func itemElements(sets []*fieldpath.Set, list []any, i int) []fieldpath.PathElement {
	var out []fieldpath.PathElement
	pick := func(pe fieldpath.PathElement) {
		if slices.Contains(matchingItems(list, pe), i) {
			out = append(out, pe)
		}
	}
	for _, s := range sets {
		for pe := range s.Members.All() {
			pick(pe)
		}
		for pe := range s.Children.All() {
			pick(pe)
		}
	}
	return out
}
