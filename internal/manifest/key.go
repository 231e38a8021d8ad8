package manifest

import (
	"strconv"
	"strings"
)

// Key returns the stable key of obj, documented in the package
// documentation: <Kind>[.<group>]/[<namespace>/]<name>. The namespace segment
// appears only when obj's namespace is set and differs from
// defaultNamespace. Call it on normalized objects, so cluster-scoped objects
// carry no namespace.
func Key(obj Object, defaultNamespace string) string {
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	group, _, hasGroup := strings.Cut(apiVersion, "/")
	namespace := objectNamespace(obj)
	name := objectName(obj)

	var b strings.Builder
	b.Grow(len(kind) + len(group) + len(namespace) + len(name) + 3)
	b.WriteString(kind)
	if hasGroup && group != "" {
		b.WriteByte('.')
		b.WriteString(group)
	}
	b.WriteByte('/')
	if namespace != "" && namespace != defaultNamespace {
		b.WriteString(namespace)
		b.WriteByte('/')
	}
	b.WriteString(name)
	return b.String()
}

// Key is [Key] with the sensitive values r hides hidden in the object's namespace and name,
// which a chart may derive from them. Kind and group are never hidden: they are not data, and
// a short sensitive value ("app") would otherwise turn "Deployment.apps/web" into a key no
// other rendering of the same object gives.
func (r *Redactor) Key(obj Object, defaultNamespace string) string {
	if r == nil {
		return Key(obj, defaultNamespace)
	}
	metadata := map[string]any{"name": r.String(objectName(obj))}
	if namespace := objectNamespace(obj); namespace != "" {
		if namespace == defaultNamespace {
			metadata["namespace"] = namespace
		} else {
			metadata["namespace"] = r.String(namespace)
		}
	}
	return Key(Object{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": metadata}, defaultNamespace)
}

func objectMetadata(obj Object) map[string]any {
	metadata, _ := obj["metadata"].(map[string]any)
	return metadata
}

func objectName(obj Object) string {
	name, _ := objectMetadata(obj)["name"].(string)
	return name
}

func objectNamespace(obj Object) string {
	namespace, _ := objectMetadata(obj)["namespace"].(string)
	return namespace
}

// ParseKey reads a key [Key] wrote: the object's kind, group ("" for the core group),
// namespace ("" when the key names none: a cluster-scoped object or one in the default
// namespace) and name. ok is false for a text Key cannot have written.
func ParseKey(key string) (kind, group, namespace, name string, ok bool) {
	parts := strings.Split(key, "/")
	switch len(parts) {
	case 2:
		name = parts[1]
	case 3:
		namespace, name = parts[1], parts[2]
		if namespace == "" {
			return "", "", "", "", false
		}
	default:
		return "", "", "", "", false
	}
	kind, group, _ = strings.Cut(parts[0], ".")
	if kind == "" || name == "" {
		return "", "", "", "", false
	}
	return kind, group, namespace, name, true
}

// TopLevelScalar returns the value of a top-level key of a manifest [Manifests] wrote (block
// style, top-level keys at the start of a line), when it is a plain or quoted scalar on the
// key's line; ok is false otherwise. It reads a field such as apiVersion without parsing the
// whole manifest.
func TopLevelScalar(text, key string) (value string, ok bool) {
	prefix := key + ": "
	for line := range strings.Lines(text) {
		rest, found := strings.CutPrefix(line, prefix)
		if !found {
			continue
		}
		rest = strings.TrimRight(rest, "\r\n")
		switch {
		case rest == "" || strings.ContainsAny(rest[:1], "|>&*!{[#%@`"):
			return "", false
		case rest[0] == '"':
			v, err := strconv.Unquote(rest)
			return v, err == nil
		case rest[0] == '\'':
			if len(rest) < 2 || rest[len(rest)-1] != '\'' {
				return "", false
			}
			return strings.ReplaceAll(rest[1:len(rest)-1], "''", "'"), true
		case strings.Contains(rest, " #"):
			return "", false
		}
		return rest, true
	}
	return "", false
}
