package manifest

import "strings"

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
