package helmrelease

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Project returns what of live the release manages: the value live holds at every path
// desired sets, and nothing else. Compared with desired, it shows a field changed with
// kubectl or an object edited by hand as exactly that change, while fields the chart does not
// set (API-server defaults, labels Helm adds, status) never show.
//
// Where live and desired agree in meaning, desired's spelling is kept: numbers of different
// Go types, resource quantities ("0.5" and "500m"), a Secret's stringData against its
// base64 data, and zero values the API server leaves out. A field whose current manager is
// a controller (an autoscaler's replicas) keeps its desired value too: that controller,
// not the chart, decides it. A desired field or list element missing from live is left out.
//
// desired and live are JSON-compatible values; neither is changed.
func Project(desired, live map[string]any) map[string]any {
	if live == nil {
		return nil
	}
	p := projector{controllerFields: controllerOwnedFields(live)}
	live = secretStringData(desired, live)
	out, _ := p.value(desired, live, p.controllerFields, nil)
	projected, _ := out.(map[string]any)
	return projected
}

type projector struct {
	controllerFields []map[string]any
}

// value projects live onto desired at one path; owners are the controller field sets narrowed
// to that path. It reports false when the path is missing from live.
func (p projector) value(desired, live any, owners []map[string]any, path []string) (any, bool) {
	if len(owners) > 0 && isLeafOwned(owners) {
		return desired, true
	}
	if isEmptyMap(desired) {
		// The chart leaves the map empty (`annotations: {}`, or `annotations:` with nothing
		// after it): the keys others put there, Helm's ownership annotations first, are theirs.
		return desired, true
	}
	switch d := desired.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return live, true
		}
		out := make(map[string]any, len(d))
		for k, dv := range d {
			lv, present := l[k]
			if !present || lv == nil {
				if isZero(dv) {
					out[k] = dv
				}
				continue
			}
			if v, ok := p.value(dv, lv, narrowField(owners, k), append(path, k)); ok {
				out[k] = v
			}
		}
		return out, true
	case []any:
		l, ok := live.([]any)
		if !ok {
			return live, true
		}
		return p.list(d, l, owners, path), true
	default:
		if sameScalar(desired, live, path) {
			return desired, true
		}
		return live, true
	}
}

// list projects a list: elements that are objects with a name are matched by name (a
// container, an env var, a volume), other object elements by position; a list of scalars is
// the chart's as a whole, so live's is shown.
func (p projector) list(desired, live []any, owners []map[string]any, path []string) []any {
	if !allMaps(desired) {
		if reflect.DeepEqual(normalizeNumbers(desired), normalizeNumbers(live)) {
			return desired
		}
		return live
	}
	out := make([]any, 0, len(desired))
	byName := allNamed(desired) && allNamed(live)
	for i, dv := range desired {
		var lv any
		if byName {
			name, _ := dv.(map[string]any)["name"].(string)
			lv = findNamed(live, name)
		} else if i < len(live) {
			lv = live[i]
		}
		if lv == nil {
			continue
		}
		if v, ok := p.value(dv, lv, narrowElement(owners, lv), append(path, fmt.Sprint(i))); ok {
			out = append(out, v)
		}
	}
	return out
}

func allMaps(list []any) bool {
	for _, v := range list {
		if _, ok := v.(map[string]any); !ok {
			return false
		}
	}
	return len(list) > 0
}

func allNamed(list []any) bool {
	seen := map[string]bool{}
	for _, v := range list {
		m, _ := v.(map[string]any)
		name, ok := m["name"].(string)
		if !ok || seen[name] {
			return false
		}
		seen[name] = true
	}
	return true
}

func findNamed(list []any, name string) any {
	for _, v := range list {
		if m, _ := v.(map[string]any); m["name"] == name {
			return v
		}
	}
	return nil
}

// isEmptyMap reports a value a chart writes as an empty map: null or {}.
func isEmptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return v == nil || (ok && len(m) == 0)
}

// isZero reports values the API server drops when it stores an object: null, "", false,
// 0 and empty lists and maps.
func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case int64:
		return x == 0
	case int:
		return x == 0
	case float64:
		return x == 0
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// quantityKeys are the parents of resource quantities, whose spelling the API server changes.
var quantityKeys = []string{"limits", "requests", "hard", "capacity", "default", "defaultRequest", "max", "min", "maxLimitRequestRatio"}

// sameScalar reports whether two scalars mean the same.
func sameScalar(desired, live any, path []string) bool {
	if desired == live {
		return true
	}
	if dn, ok := number(desired); ok {
		if ln, ok := number(live); ok {
			return dn == ln
		}
	}
	if len(path) >= 2 && slices.Contains(quantityKeys, path[len(path)-2]) {
		dq, derr := resource.ParseQuantity(fmt.Sprint(desired))
		lq, lerr := resource.ParseQuantity(fmt.Sprint(live))
		return derr == nil && lerr == nil && dq.Cmp(lq) == 0
	}
	return false
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func normalizeNumbers(list []any) []any {
	out := make([]any, len(list))
	for i, v := range list {
		if n, ok := number(v); ok {
			out[i] = n
		} else {
			out[i] = v
		}
	}
	return out
}

// secretStringData gives a live Secret the stringData desired sets, decoded from its data,
// as the API server folds stringData into data and never returns it.
func secretStringData(desired, live map[string]any) map[string]any {
	if desired["kind"] != "Secret" {
		return live
	}
	want, _ := desired["stringData"].(map[string]any)
	data, _ := live["data"].(map[string]any)
	if len(want) == 0 {
		return live
	}
	stringData := make(map[string]any, len(want))
	for k := range want {
		encoded, ok := data[k].(string)
		if !ok {
			continue
		}
		if decoded, err := base64.StdEncoding.DecodeString(encoded); err == nil {
			stringData[k] = string(decoded)
		}
	}
	out := make(map[string]any, len(live)+1)
	for k, v := range live {
		out[k] = v
	}
	out["stringData"] = stringData
	return out
}

// controllerManagers name the field managers of controllers: fields they own are theirs to
// decide, not drift. kube-controller-manager covers the built-in controllers (an HPA's
// replicas); the patterns catch autoscalers and operators.
var controllerManagerPatterns = []string{"controller", "autoscaler", "operator", "kube-scheduler"}

// IsControllerManager reports whether a managedFields manager name is a controller's.
func IsControllerManager(manager string) bool {
	if manager == FieldManager {
		return false
	}
	m := strings.ToLower(manager)
	for _, p := range controllerManagerPatterns {
		if strings.Contains(m, p) {
			return true
		}
	}
	return false
}

// controllerOwnedFields returns the FieldsV1 sets of the controller managers of obj.
func controllerOwnedFields(obj map[string]any) []map[string]any {
	metadata, _ := obj["metadata"].(map[string]any)
	entries, _ := metadata["managedFields"].([]any)
	var sets []map[string]any
	for _, e := range entries {
		entry, _ := e.(map[string]any)
		manager, _ := entry["manager"].(string)
		fields, _ := entry["fieldsV1"].(map[string]any)
		if fields != nil && IsControllerManager(manager) {
			sets = append(sets, fields)
		}
	}
	return sets
}

// isLeafOwned reports whether a narrowed field set marks the path itself as owned: a leaf
// entry is an empty set, an owned object carries the "." member.
func isLeafOwned(owners []map[string]any) bool {
	for _, o := range owners {
		if len(o) == 0 {
			return true
		}
		if _, ok := o["."]; ok && len(o) == 1 {
			return true
		}
	}
	return false
}

// narrowField steps the field sets into the field k of an object.
func narrowField(owners []map[string]any, k string) []map[string]any {
	var out []map[string]any
	for _, o := range owners {
		if sub, ok := o["f:"+k].(map[string]any); ok {
			out = append(out, sub)
		}
	}
	return out
}

// narrowElement steps the field sets into the list element elem, which FieldsV1 names by
// its key fields ("k:{...}") or, in a set, by its value ("v:...").
func narrowElement(owners []map[string]any, elem any) []map[string]any {
	var out []map[string]any
	for _, o := range owners {
		for member, sub := range o {
			subSet, ok := sub.(map[string]any)
			if !ok {
				continue
			}
			if matchesElement(member, elem) {
				out = append(out, subSet)
			}
		}
	}
	return out
}

func matchesElement(member string, elem any) bool {
	switch {
	case strings.HasPrefix(member, "k:"):
		var keys map[string]any
		if json.Unmarshal([]byte(member[2:]), &keys) != nil {
			return false
		}
		m, ok := elem.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range keys {
			if !sameScalar(v, m[k], nil) {
				return false
			}
		}
		return len(keys) > 0
	case strings.HasPrefix(member, "v:"):
		var v any
		if json.Unmarshal([]byte(member[2:]), &v) != nil {
			return false
		}
		return sameScalar(v, elem, nil) || reflect.DeepEqual(v, elem)
	}
	return false
}
