package manifest

import (
	"fmt"
	"slices"
	"strings"
)

// NullFields returns the paths of the mapping entries of obj whose value is null, in the form
// ".spec.storageClassName" (".metadata.annotations[\"a.b/c\"]" for a key with a dot, "[0]" for a
// list element), sorted. The API server drops such an entry when it creates the object, and may
// fill in a default there; a server-side apply takes it as asking to remove the field. Left out
// are status, which an apply does not write, and a metadata's creationTimestamp, which the
// server sets whatever it is sent (kubectl's generated manifests carry it as null).
func NullFields(obj Object) []string {
	var out []string
	var walk func(value any, path string, inMetadata bool)
	walk = func(value any, path string, inMetadata bool) {
		switch v := value.(type) {
		case map[string]any:
			for key, elem := range v {
				if path == "" && key == "status" || inMetadata && key == "creationTimestamp" {
					continue
				}
				at := path + fieldSegment(key)
				if elem == nil {
					out = append(out, at)
					continue
				}
				walk(elem, at, key == "metadata")
			}
		case []any:
			for i, elem := range v {
				walk(elem, fmt.Sprintf("%s[%d]", path, i), false)
			}
		}
	}
	walk(map[string]any(obj), "", false)
	slices.Sort(out)
	return out
}

// fieldSegment is key as a segment of a NullFields path.
func fieldSegment(key string) string {
	if key != "" && !strings.ContainsAny(key, ".[]\"") {
		return "." + key
	}
	return fmt.Sprintf("[%q]", key)
}
