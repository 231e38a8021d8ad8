package manifest

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// serverNulls puts into out, a copy of obj without its nulls, what the API server keeps of
// them in an object of a built-in kind, which it decodes into its Go type: a null where the type
// holds a string (a label or annotation, a ConfigMap's data, a container's args, a pod's
// nodeSelector) becomes an empty string, and so does one among a Secret's data or a
// ConfigMap's binaryData, bytes the server stores empty. Every other null stays out, as the
// server drops it; of a kind the provider has no Go type for (a custom resource), only the
// metadata's are read so.
func serverNulls(obj, out Object) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return
	}
	gvk := gv.WithKind(kind)
	read := serverRead(obj, gvk)
	if read == nil {
		return
	}
	eachNull(obj, nil, func(at []any) {
		if len(at) == 0 {
			return
		}
		v, present := valueAt(read, at)
		switch {
		case isString(v):
		case present && v == nil && storedAsBytes(gvk, at):
			v = ""
		default:
			return
		}
		parent, _ := valueAt(out, at[:len(at)-1])
		switch last := at[len(at)-1].(type) {
		case string:
			if p, ok := parent.(map[string]any); ok {
				p[last] = v
			}
		case int:
			if p, ok := parent.([]any); ok {
				p[last] = v
			}
		}
	})
}

// serverRead returns obj as the API server reads it into the Go type of its kind, nil when it
// cannot be read so; a kind without one (a custom resource) gets its metadata read into
// ObjectMeta, as the server reads every object's.
func serverRead(obj Object, gvk schema.GroupVersionKind) map[string]any {
	if typed, err := scheme.Scheme.New(gvk); err == nil {
		return roundTrip(obj, typed)
	}
	metadata, ok := obj["metadata"].(map[string]any)
	if !ok {
		return nil
	}
	read := roundTrip(metadata, &metav1.ObjectMeta{})
	if read == nil {
		return nil
	}
	return map[string]any{"metadata": read}
}

// roundTrip reads value into typed and returns what typed holds.
func roundTrip(value map[string]any, typed any) map[string]any {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(value, typed); err != nil {
		return nil
	}
	read, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return nil
	}
	return read
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

// storedAsBytes reports whether at is an entry of a Secret's data or a ConfigMap's binaryData.
func storedAsBytes(gvk schema.GroupVersionKind, at []any) bool {
	if gvk.Group != "" || gvk.Version != "v1" || len(at) != 2 {
		return false
	}
	return gvk.Kind == "Secret" && at[0] == "data" || gvk.Kind == "ConfigMap" && at[0] == "binaryData"
}

// eachNull calls f with the path (keys and indexes) of every null in value but status.
func eachNull(value any, at []any, f func([]any)) {
	switch v := value.(type) {
	case nil:
		f(at)
	case map[string]any:
		for key, elem := range v {
			if len(at) == 0 && key == "status" {
				continue
			}
			eachNull(elem, append(at[:len(at):len(at)], key), f)
		}
	case []any:
		for i, elem := range v {
			eachNull(elem, append(at[:len(at):len(at)], i), f)
		}
	}
}

// valueAt returns the value at path in value, and whether there is one.
func valueAt(value any, path []any) (any, bool) {
	for _, step := range path {
		switch v := value.(type) {
		case map[string]any:
			key, _ := step.(string)
			elem, ok := v[key]
			if !ok {
				return nil, false
			}
			value = elem
		case []any:
			i, ok := step.(int)
			if !ok || i < 0 || i >= len(v) {
				return nil, false
			}
			value = v[i]
		default:
			return nil, false
		}
	}
	return value, true
}
