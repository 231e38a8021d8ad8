package chart

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"reflect"
	"sync"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// Objects answers a chart's lookup function from what a cluster holds.
type Objects interface {
	// Lookup returns what Helm's lookup returns: the content of the object of apiVersion and
	// kind named name in namespace, or the content of the list of them all when name is
	// empty, and an empty map when there is none.
	Lookup(ctx context.Context, apiVersion, kind, namespace, name string) (map[string]any, error)
}

// lookupCall is one call of the lookup function.
type lookupCall struct{ apiVersion, kind, namespace, name string }

// lookups answers the lookup function for the renderings of one plan or apply: each answer
// of objects is read once, and a round may lay the objects a rendering applies over them, so
// that a chart renders as it will once they exist (see renderToFixedPoint).
type lookups struct {
	objects   Objects
	namespace string
	mu        sync.Mutex
	read      map[lookupCall]lookupAnswer
}

// lookupAnswer is what objects answered.
type lookupAnswer struct {
	content map[string]any
	err     error
}

func newLookups(objects Objects, namespace string) *lookups {
	return &lookups{objects: objects, namespace: namespace, read: map[lookupCall]lookupAnswer{}}
}

// fromCluster returns what objects holds for call, read once.
func (l *lookups) fromCluster(ctx context.Context, call lookupCall) (map[string]any, error) {
	if l.objects == nil {
		return map[string]any{}, nil // as helm template: nothing is found
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if a, ok := l.read[call]; ok {
		return copyMap(a.content), a.err
	}
	content, err := l.objects.Lookup(ctx, call.apiVersion, call.kind, call.namespace, call.name)
	if content == nil {
		content = map[string]any{}
	}
	l.read[call] = lookupAnswer{content: content, err: err}
	return copyMap(content), err
}

// lookupRound answers one rendering's lookups with overlay laid over the cluster's objects,
// and records its answers.
type lookupRound struct {
	lookups  *lookups
	overlay  []manifest.Object
	mu       sync.Mutex
	answered map[lookupCall]map[string]any
}

func (l *lookups) round(overlay []manifest.Object) *lookupRound {
	return &lookupRound{lookups: l, overlay: overlay, answered: map[lookupCall]map[string]any{}}
}

// fn is the template function lookup.
func (r *lookupRound) fn(ctx context.Context) func(apiVersion, kind, namespace, name string) (map[string]any, error) {
	return func(apiVersion, kind, namespace, name string) (map[string]any, error) {
		call := lookupCall{apiVersion, kind, namespace, name}
		content, err := r.answer(ctx, call, r.overlay)
		if err != nil {
			return map[string]any{}, err
		}
		r.mu.Lock()
		r.answered[call] = copyMap(content)
		r.mu.Unlock()
		return content, nil
	}
}

// asked reports whether the rendering called lookup.
func (r *lookupRound) asked() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.answered) > 0
}

// sameWith reports whether every lookup of the round gets the same answer with objs laid over
// the cluster's objects instead.
func (r *lookupRound) sameWith(ctx context.Context, objs []manifest.Object) bool {
	r.mu.Lock()
	answered := maps.Clone(r.answered)
	r.mu.Unlock()
	for call, given := range answered {
		content, err := r.answer(ctx, call, objs)
		if err != nil || !reflect.DeepEqual(content, given) {
			return false
		}
	}
	return true
}

// answer is what call finds with overlay laid over the cluster's objects.
func (r *lookupRound) answer(ctx context.Context, call lookupCall, overlay []manifest.Object) (map[string]any, error) {
	content, err := r.lookups.fromCluster(ctx, call)
	if err != nil {
		return nil, err
	}
	var matches []manifest.Object
	for _, obj := range overlay {
		if r.lookups.matches(obj, call) {
			matches = append(matches, obj)
		}
	}
	if len(matches) == 0 {
		return content, nil
	}
	if call.name != "" {
		return overlaid(content, matches[0]), nil
	}
	return overlaidList(content, matches, call), nil
}

// matches reports whether call finds obj, an object of the release.
func (l *lookups) matches(obj manifest.Object, call lookupCall) bool {
	metadata, _ := obj["metadata"].(map[string]any)
	namespace, _ := metadata["namespace"].(string)
	if namespace == "" {
		namespace = l.namespace
	}
	return obj["apiVersion"] == call.apiVersion && obj["kind"] == call.kind && namespace == call.namespace &&
		(call.name == "" || metadata["name"] == call.name)
}

// overlaid returns live, what the cluster holds of an object (empty when nothing), with obj's
// fields laid over it as the API server stores them.
func overlaid(live map[string]any, obj manifest.Object) map[string]any {
	return mergeMaps(live, stored(obj))
}

// overlaidList returns list, the cluster's answer to a list lookup, with objs in place of or
// beside its items.
func overlaidList(list map[string]any, objs []manifest.Object, call lookupCall) map[string]any {
	if len(list) == 0 {
		list = map[string]any{"apiVersion": call.apiVersion, "kind": call.kind + "List", "metadata": map[string]any{}}
	}
	items, _ := list["items"].([]any)
	for _, obj := range objs {
		metadata, _ := obj["metadata"].(map[string]any)
		i := 0
		for ; i < len(items); i++ {
			item, _ := items[i].(map[string]any)
			itemMeta, _ := item["metadata"].(map[string]any)
			if itemMeta["name"] == metadata["name"] {
				break
			}
		}
		if i < len(items) {
			item, _ := items[i].(map[string]any)
			items[i] = overlaid(item, obj)
		} else {
			items = append(items, overlaid(map[string]any{}, obj))
		}
	}
	list["items"] = items
	return list
}

// stored returns obj as the API server stores it, as far as a chart reads it back: a Secret's
// stringData is encoded into its data.
func stored(obj manifest.Object) map[string]any {
	out := copyMap(obj)
	if obj["apiVersion"] != "v1" || obj["kind"] != "Secret" {
		return out
	}
	stringData, _ := out["stringData"].(map[string]any)
	if len(stringData) == 0 {
		return out
	}
	data, _ := out["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range stringData {
		data[k] = base64.StdEncoding.EncodeToString(fmt.Append(nil, v))
	}
	out["data"] = data
	delete(out, "stringData")
	return out
}
