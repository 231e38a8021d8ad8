package kube

import (
	"slices"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// extractFields returns the parts of v at the paths of set, in v's own shape: a member of set
// (a leaf path) is copied whole, a child set is extracted recursively. It needs no schema: the
// managed fields the API server records already name list items by key (`k:{"name":"web"}`),
// value (`v:"a"`) or index, so the object itself is enough to follow them. The result is a copy:
// changing it leaves v as it was. It gives what typed.TypedValue.ExtractItems gives without
// parsing the built-in OpenAPI schema, which takes tens of milliseconds in every provider process
// that reads an environment.
func extractFields(v any, set *fieldpath.Set) any {
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
			out[*pe.FieldName] = extractFields(x, child)
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
				picked[i] = extractFields(t[i], child)
			}
		}
		indexes := make([]int, 0, len(picked))
		for i := range picked {
			indexes = append(indexes, i)
		}
		slices.Sort(indexes)
		out := make([]any, 0, len(indexes))
		for _, i := range indexes {
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
