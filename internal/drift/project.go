package drift

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/parallel"
)

// Project returns what of live the release manages: the value live holds at every path
// desired sets, and nothing else. Compared with desired, it shows a field changed with
// kubectl or an object edited by hand as exactly that change, while fields the chart does not
// set (API-server defaults, labels Helm adds, status) never show.
//
// Where live and desired agree in meaning, desired's spelling is kept: numbers of different
// Go types, resource quantities ("0.5" and "500m"), a Secret's stringData against its
// base64 data, and zero values the API server leaves out. A map the chart leaves empty or
// null keeps what others put there. A field the rules ignore keeps its desired value too (see
// [Rules]). A desired field or list element missing from live is left out.
//
// desired and live are JSON-compatible values; neither is changed.
func (r Rules) Project(desired, live map[string]any) map[string]any {
	if live == nil {
		return nil
	}
	p := projector{pointers: r.pointersFor(desired)}
	owners, err := r.ownedFields(desired, live)
	if err != nil {
		// Unreadable managed fields own nothing: the drift shows rather than hides.
		owners = nil
	}
	live = secretStringData(desired, live)
	out, _ := p.value(desired, live, owners, nil)
	projected, _ := out.(map[string]any)
	return projected
}

// ProjectAll is Project of each desired object over the live one at the same index, on every
// core: a refresh projects every object of the release. out[i] is nil where live[i] is.
func (r Rules) ProjectAll(desired, live []map[string]any) []map[string]any {
	out := make([]map[string]any, len(desired))
	parallel.Chunks(len(desired), func(start, end int) {
		for i := start; i < end; i++ {
			out[i] = r.Project(desired[i], live[i])
		}
	})
	return out
}

// Yield returns what of desired to apply over live by server-side apply: desired without the
// fields that the rules leave to others (see [Rules]) where live holds another value and the
// user did not change them, that is where desired means what previous, the object as the
// revision the apply moves from set it, held there. Left out of the apply, such a field stays
// as its manager set it, such as the replicas an autoscaler set: the value differs from what
// the provider applied, so the provider's manager no longer owns it. A field whose live value
// means desired's stays in, so the provider keeps owning it. A field the user changed stays in
// too, and the forced apply takes it back, as the plan showed: the plan compares the new
// rendering with the previous one there, whatever another manager wrote. An object new in this
// revision (previous nil) is applied whole.
// desired is returned as it is when nothing is left out, else a copy; none is changed.
func (r Rules) Yield(desired, previous, live map[string]any) map[string]any {
	if live == nil || previous == nil {
		return desired
	}
	var yielded [][]string
	p := projector{pointers: r.pointersFor(desired), yielded: &yielded}
	owners, err := r.ownedFields(desired, live)
	if err != nil {
		owners = nil
	}
	p.value(desired, secretStringData(desired, live), owners, nil)
	yielded = slices.DeleteFunc(yielded, func(path []string) bool { return changedAt(desired, previous, path) })
	if len(yielded) == 0 {
		return desired
	}
	out, _ := manifest.DeepCopy(desired).(map[string]any)
	for _, path := range yielded {
		removePath(out, path)
	}
	// A map is compacted in place.
	compactLists(out)
	return out
}

// WithoutInjectedCABundles returns obj without the caBundle fields it leaves empty
// (injectedCABundles), for a definition applied whole, as crds/ definitions are under
// create_replace: left out of a server-side apply, what a controller injected there stays,
// where the chart's "" would clear it. obj is returned as it is when it has none, else a copy.
func WithoutInjectedCABundles(obj map[string]any) map[string]any {
	injected := injectedCABundles(obj)
	if len(injected) == 0 {
		return obj
	}
	out, _ := manifest.DeepCopy(obj).(map[string]any)
	for _, pointer := range injected {
		if tokens, err := pointerTokens(pointer); err == nil {
			removePath(out, tokens)
		}
	}
	return out
}

// changedAt reports whether desired holds at path (map keys and indexes into desired's
// lists) what previous does not mean, or previous nothing there. Items of lists of named
// objects are matched by name, as [Rules.Project] matches them with live.
func changedAt(desired, previous any, path []string) bool {
	d, p := desired, previous
	for _, token := range path {
		switch dt := d.(type) {
		case map[string]any:
			pt, ok := p.(map[string]any)
			if !ok {
				return true
			}
			if p, ok = pt[token]; !ok {
				return true
			}
			d = dt[token]
		case []any:
			pt, ok := p.([]any)
			n, err := strconv.Atoi(token)
			if !ok || err != nil || n < 0 || n >= len(dt) {
				return true
			}
			pi := n
			if allNamed(dt) && allNamed(pt) {
				name, _ := dt[n].(map[string]any)["name"].(string)
				pi = indexNamed(pt, name)
			}
			if pi < 0 || pi >= len(pt) {
				return true
			}
			d, p = dt[n], pt[pi]
		default:
			return true
		}
	}
	return !means(d, p, path) || !means(p, d, path)
}

// means reports whether other holds what desired means at path, spelled the same or not;
// what other holds beyond desired's keys is not compared.
func means(desired, other any, path []string) bool {
	v, ok := (projector{}).value(desired, other, nil, path)
	return ok && reflect.DeepEqual(v, desired)
}

// removed marks a list item removePath took out, until compactLists drops it, so that the
// indexes of the other paths still hold.
type removed struct{}

// removePath removes the value at path (map keys and list indexes) from v.
func removePath(v any, path []string) {
	for i, token := range path {
		last := i == len(path)-1
		switch t := v.(type) {
		case map[string]any:
			if last {
				delete(t, token)
				return
			}
			v = t[token]
		case []any:
			n, err := strconv.Atoi(token)
			if err != nil || n < 0 || n >= len(t) {
				return
			}
			if last {
				t[n] = removed{}
				return
			}
			v = t[n]
		default:
			return
		}
	}
}

// compactLists drops the items removePath marked.
func compactLists(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = compactLists(x)
		}
		return t
	case []any:
		out := make([]any, 0, len(t))
		for _, x := range t {
			if _, gone := x.(removed); !gone {
				out = append(out, compactLists(x))
			}
		}
		return out
	default:
		return v
	}
}

type projector struct {
	// pointers are the ignored paths, as JSON pointer tokens.
	pointers [][]string
	// yielded, when not nil, collects the paths (into desired) that the rules leave to others
	// and where live holds something else.
	yielded *[][]string
}

// yield records path when live holds there what does not mean desired. A null desired means
// no value to keep, not an empty map keeping others' keys: applied, a forced apply would clear
// what live holds.
func (p projector) yield(desired, live any, path []string) {
	if p.yielded == nil {
		return
	}
	if desired == nil && live != nil {
		*p.yielded = append(*p.yielded, slices.Clone(path))
		return
	}
	if means(desired, live, path) {
		return
	}
	*p.yielded = append(*p.yielded, slices.Clone(path))
}

// value projects live onto desired at one path; owners are the ignored managers' field sets
// narrowed to that path. It reports false when the path is missing from live.
func (p projector) value(desired, live any, owners []*fieldpath.Set, path []string) (any, bool) {
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
			childPath := append(slices.Clip(path), k)
			pe := fieldpath.PathElement{FieldName: &k}
			lv, present := l[k]
			if p.ignored(childPath) || ownsWhole(owners, pe) {
				if present {
					p.yield(dv, lv, childPath)
				}
				out[k] = dv
				continue
			}
			if !present || lv == nil {
				if isZero(dv) {
					out[k] = dv
				}
				continue
			}
			if v, ok := p.value(dv, lv, narrow(owners, pe), childPath); ok {
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

// ignored reports whether path is at or under an ignored JSON pointer.
func (p projector) ignored(path []string) bool {
	for _, ptr := range p.pointers {
		if len(ptr) <= len(path) && slices.Equal(ptr, path[:len(ptr)]) {
			return true
		}
	}
	return false
}

// list projects a list: elements that are objects with a name are matched by name (a
// container, an env var, a volume), other object elements by position; a list of scalars is
// the chart's as a whole, so live's is shown.
func (p projector) list(desired, live []any, owners []*fieldpath.Set, path []string) []any {
	if !allMaps(desired) {
		if reflect.DeepEqual(normalizeNumbers(desired), normalizeNumbers(live)) {
			return desired
		}
		return live
	}
	out := make([]any, 0, len(desired))
	byName := allNamed(desired) && allNamed(live)
	for i, dv := range desired {
		li := -1
		if byName {
			name, _ := dv.(map[string]any)["name"].(string)
			li = indexNamed(live, name)
		} else if i < len(live) {
			li = i
		}
		childPath := append(slices.Clip(path), strconv.Itoa(i))
		if p.ignored(childPath) {
			if li >= 0 {
				p.yield(dv, live[li], childPath)
			}
			out = append(out, dv)
			continue
		}
		if li < 0 {
			continue
		}
		elems := itemElements(owners, live, li)
		if ownsWhole(owners, elems...) {
			p.yield(dv, live[li], childPath)
			out = append(out, dv)
			continue
		}
		if v, ok := p.value(dv, live[li], narrow(owners, elems...), childPath); ok {
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

func indexNamed(list []any, name string) int {
	for i, v := range list {
		if m, _ := v.(map[string]any); m["name"] == name {
			return i
		}
	}
	return -1
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
