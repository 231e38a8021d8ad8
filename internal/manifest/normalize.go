package manifest

import (
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
)

// lastAppliedAnnotation holds a JSON copy of the object that kubectl apply
// last sent: noise in a plan, and Secret data in plain text for Secrets.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// serverSetMetadata are the metadata fields the API server sets; they differ
// between any two reads and say nothing about what was asked for.
var serverSetMetadata = []string{
	"creationTimestamp",
	"resourceVersion",
	"uid",
	"generation",
	"managedFields",
	"selfLink",
	"deletionTimestamp",
	"deletionGracePeriodSeconds",
}

// Normalize returns a copy of obj fit for comparison and display; obj itself
// is not changed. It drops status, the server-set metadata fields
// (creationTimestamp, resourceVersion, uid, generation, managedFields,
// selfLink, deletionTimestamp, deletionGracePeriodSeconds), the
// kubectl.kubernetes.io/last-applied-configuration annotation, the record
// annotations in gitlab.VolatileAnnotations, empty labels and annotations,
// and null values in mappings at any depth, but those the API server reads as an empty string
// in a built-in kind (serverNulls).
//
// A namespaced object without a namespace gets defaultNamespace (if not
// empty). A cluster-scoped object loses any namespace, as the API server
// ignores it.
func Normalize(obj Object, defaultNamespace string, namespaced bool) Object {
	if obj == nil {
		return nil
	}
	var dropped bool
	out := copyMap(obj, &dropped)
	if dropped {
		serverNulls(obj, out)
	}
	delete(out, "status")

	metadata, _ := out["metadata"].(map[string]any)
	if metadata == nil {
		metadata = map[string]any{}
	}
	for _, field := range serverSetMetadata {
		delete(metadata, field)
	}
	if annotations, ok := metadata["annotations"].(map[string]any); ok {
		delete(annotations, lastAppliedAnnotation)
		for _, key := range gitlab.VolatileAnnotations {
			delete(annotations, key)
		}
	}
	for _, field := range []string{"labels", "annotations"} {
		if m, ok := metadata[field].(map[string]any); ok && len(m) == 0 {
			delete(metadata, field)
		}
	}

	if namespace, _ := metadata["namespace"].(string); namespace == "" {
		delete(metadata, "namespace")
	}
	switch {
	case !namespaced:
		delete(metadata, "namespace")
	case metadata["namespace"] == nil && defaultNamespace != "":
		metadata["namespace"] = defaultNamespace
	}

	if len(metadata) == 0 {
		delete(out, "metadata")
	} else {
		out["metadata"] = metadata
	}
	return out
}

// DeepCopy copies the maps and slices of a JSON-compatible value, so the copy shares nothing
// with value.
func DeepCopy(value any) any { return copyValue(value, nil) }

// copyMap deep-copies a mapping; see copyValue.
func copyMap(m map[string]any, dropped *bool) map[string]any {
	out := make(map[string]any, len(m))
	for key, elem := range m {
		if elem == nil && dropped != nil {
			*dropped = true
			continue
		}
		out[key] = copyValue(elem, dropped)
	}
	return out
}

// copyValue deep-copies the maps and slices of a JSON-compatible value. With dropped set,
// mapping entries whose value is null are left out, and *dropped says whether there were any
// (list elements are kept, as dropping them would shift positions).
func copyValue(value any, dropped *bool) any {
	switch v := value.(type) {
	case map[string]any:
		return copyMap(v, dropped)
	case []any:
		out := make([]any, len(v))
		for i, elem := range v {
			if elem == nil && dropped != nil {
				*dropped = true
			}
			out[i] = copyValue(elem, dropped)
		}
		return out
	default:
		return value
	}
}
