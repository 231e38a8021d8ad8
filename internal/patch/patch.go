// Package patch changes a rendering's objects with kustomize's patches, as Flux's
// helm-controller post-renders a release: a strategic-merge patch, or a JSON 6902 patch when
// the patch is a list of operations, applied to every object its target selects. It knows
// nothing of charts or clusters: it takes objects and returns objects.
package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/kustomize/api/filters/patchjson6902"
	"sigs.k8s.io/kustomize/api/filters/patchstrategicmerge"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/resid"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	k8syaml "sigs.k8s.io/yaml"
)

// Target selects the objects a patch applies to. Group, Version, Kind, Name and Namespace
// are regular expressions matched against the whole field, as kustomize matches them; empty
// matches any. LabelSelector is a Kubernetes label selector ("app=web,tier!=cache").
type Target struct {
	Group, Version, Kind, Name, Namespace, LabelSelector string
}

// Patch is one patch of a rendering: Patch, YAML or JSON, is a strategic-merge patch (a
// mapping, a partial object) or a JSON 6902 patch (a list of operations).
type Patch struct {
	Target Target
	Patch  string
}

// Error is a patch that is invalid, cannot be applied, or selects nothing. Index is its place
// in the list, counted from 0.
type Error struct {
	Index int
	Err   error
}

func (e *Error) Error() string { return fmt.Sprintf("patches[%d]: %v", e.Index, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// ErrNoTarget is a target that selects by nothing but group and version, which would patch
// every object of a kind no one named.
var ErrNoTarget = errors.New("the target selects no object by kind, name or label_selector; set at least one of them")

// ErrNoMatch is a patch whose target selects no object of the rendering.
var ErrNoMatch = errors.New("the target matches no object of the rendering, hooks included")

// Set is a list of patches, parsed once.
type Set struct {
	patches []parsed
}

// parsed is a patch ready to apply.
type parsed struct {
	selector *types.SelectorRegex
	labels   labels.Selector
	// merge is a strategic-merge patch; operations a JSON 6902 patch, as JSON.
	merge      *kyaml.RNode
	operations string
}

// Parse parses patches, or returns an *Error for the first that is invalid. An empty list
// gives a nil Set, which patches nothing.
func Parse(patches []Patch) (*Set, error) {
	if len(patches) == 0 {
		return nil, nil
	}
	s := &Set{}
	for i, p := range patches {
		parsed, err := parse(p)
		if err != nil {
			return nil, &Error{Index: i, Err: err}
		}
		s.patches = append(s.patches, parsed)
	}
	return s, nil
}

// Validate says whether p can be parsed, as Parse would.
func (p Patch) Validate() error {
	_, err := parse(p)
	return err
}

func parse(p Patch) (parsed, error) {
	t := p.Target
	if t.Kind == "" && t.Name == "" && t.LabelSelector == "" {
		return parsed{}, ErrNoTarget
	}
	var out parsed
	var err error
	out.selector, err = types.NewSelectorRegex(&types.Selector{
		ResId: resid.ResId{Gvk: resid.Gvk{Group: t.Group, Version: t.Version, Kind: t.Kind}, Name: t.Name, Namespace: t.Namespace},
	})
	if err != nil {
		return parsed{}, fmt.Errorf("target: %w", err)
	}
	if out.labels, err = labels.Parse(t.LabelSelector); err != nil {
		return parsed{}, fmt.Errorf("target.label_selector: %w", err)
	}
	doc, err := k8syaml.YAMLToJSON([]byte(p.Patch))
	if err != nil {
		return parsed{}, fmt.Errorf("patch is neither YAML nor JSON: %w", err)
	}
	switch body := strings.TrimSpace(string(doc)); {
	case strings.HasPrefix(body, "["):
		out.operations = body
		if err := checkOperations(body); err != nil {
			return parsed{}, fmt.Errorf("patch is a list but not a JSON 6902 patch: %w", err)
		}
	case strings.HasPrefix(body, "{"):
		if out.merge, err = kyaml.ConvertJSONToYamlNode(body); err != nil {
			return parsed{}, fmt.Errorf("patch: %w", err)
		}
	default:
		return parsed{}, errors.New("patch must be a mapping (a strategic-merge patch) or a list of JSON 6902 operations")
	}
	return out, nil
}

// operations are the operations of RFC 6902.
var operations = []string{"add", "remove", "replace", "move", "copy", "test"}

// checkOperations says whether doc, a JSON list, is a list of JSON 6902 operations, each with a
// known op and a path; the JSON patch library itself only finds out when applying.
func checkOperations(doc string) error {
	var ops []map[string]any
	if err := json.Unmarshal([]byte(doc), &ops); err != nil {
		return err
	}
	for i, op := range ops {
		name, _ := op["op"].(string)
		if !slices.Contains(operations, name) {
			return fmt.Errorf("operation %d: op must be one of %s", i, strings.Join(operations, ", "))
		}
		if _, ok := op["path"].(string); !ok {
			return fmt.Errorf("operation %d: no path", i)
		}
	}
	return nil
}

// Apply applies every patch of s, in order, to every object of objs it selects, and returns
// the objects, nil in place of one a patch deleted ($patch: delete), and which of them a patch
// selected. An object without metadata.namespace counts as in namespace, the release's. A patch
// that selects nothing, or fails on an object, is an *Error.
func (s *Set) Apply(objs []map[string]any, namespace string) ([]map[string]any, []bool, error) {
	out := append([]map[string]any(nil), objs...)
	patched := make([]bool, len(objs))
	if s == nil {
		return out, patched, nil
	}
	for i, p := range s.patches {
		matched := false
		for j, obj := range out {
			if obj == nil || !p.selects(obj, namespace) {
				continue
			}
			matched, patched[j] = true, true
			var err error
			if out[j], err = p.apply(obj); err != nil {
				return nil, nil, &Error{Index: i, Err: fmt.Errorf("%s: %w", describe(obj), err)}
			}
		}
		if !matched {
			return nil, nil, &Error{Index: i, Err: ErrNoMatch}
		}
	}
	return out, patched, nil
}

// selects says whether p's target selects obj.
func (p parsed) selects(obj map[string]any, namespace string) bool {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	metadata, _ := obj["metadata"].(map[string]any)
	name, _ := metadata["name"].(string)
	ns, _ := metadata["namespace"].(string)
	if ns == "" {
		ns = namespace
	}
	group, version := resid.ParseGroupVersion(apiVersion)
	gvk := resid.Gvk{Group: group, Version: version, Kind: kind}
	if !p.selector.MatchGvk(gvk) || !p.selector.MatchName(name) || !p.selector.MatchNamespace(ns) {
		return false
	}
	return p.labels.Matches(labels.Set(stringMap(metadata["labels"])))
}

// apply applies p to obj, returning nil when it deletes obj.
func (p parsed) apply(obj map[string]any) (map[string]any, error) {
	node, err := kyaml.FromMap(obj)
	if err != nil {
		return nil, err
	}
	var filter kio.Filter = patchjson6902.Filter{Patch: p.operations}
	if p.merge != nil {
		filter = patchstrategicmerge.Filter{Patch: mergePatchFor(p.merge, node)}
	}
	nodes, err := filter.Filter([]*kyaml.RNode{node})
	if err != nil {
		return nil, err
	}
	if len(nodes) == 0 || nodes[0].IsNilOrEmpty() {
		return nil, nil
	}
	doc, err := nodes[0].MarshalJSON()
	if err != nil {
		return nil, err
	}
	// Decoded as package manifest decodes a rendering: whole numbers as int64.
	var out map[string]any
	return out, utiljson.Unmarshal(doc, &out)
}

// mergePatchFor returns a copy of patch that names obj, as kustomize applies a
// strategic-merge patch to each object its target selects: the patch need not repeat the
// object's apiVersion, kind, name or namespace, and cannot change them.
func mergePatchFor(patch, obj *kyaml.RNode) *kyaml.RNode {
	out := patch.Copy()
	out.SetApiVersion(obj.GetApiVersion())
	out.SetKind(obj.GetKind())
	_ = out.SetName(obj.GetName())
	if ns := obj.GetNamespace(); ns != "" {
		_ = out.SetNamespace(ns)
	}
	return out
}

// describe names obj as Kind/name.
func describe(obj map[string]any) string {
	metadata, _ := obj["metadata"].(map[string]any)
	kind, _ := obj["kind"].(string)
	name, _ := metadata["name"].(string)
	return kind + "/" + name
}

// stringMap returns the string entries of v, a mapping.
func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}
