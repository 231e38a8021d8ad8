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
