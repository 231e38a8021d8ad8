package manifest

// EveryString returns a Derived that recognizes every string of objs, at any depth, except
// the API versions, kinds, names and namespaces of objects, which make the keys of manifests.
// It is for objects whose chart cannot be rendered again to find what they derive from
// sensitive values: hiding every string whole hides every form of them. Like
// [DerivedFromDigests] it keeps only keyed digests of the strings, and hides them in objects,
// not in text.
func EveryString(key []byte, objs []Object) *Derived {
	identity := map[string]bool{}
	for _, obj := range objs {
		for _, field := range []any{obj["apiVersion"], obj["kind"]} {
			if s, ok := field.(string); ok {
				identity[s] = true
			}
		}
		if meta, ok := obj["metadata"].(map[string]any); ok {
			for _, field := range []any{meta["name"], meta["namespace"]} {
				if s, ok := field.(string); ok {
					identity[s] = true
				}
			}
		}
	}
	var digests []string
	var walk func(value any)
	walk = func(value any) {
		switch v := value.(type) {
		case map[string]any:
			for _, elem := range v {
				walk(elem)
			}
		case []any:
			for _, elem := range v {
				walk(elem)
			}
		case string:
			if !identity[v] {
				digests = append(digests, scalarDigest(key, "s", v))
			}
		}
	}
	for _, obj := range objs {
		walk(obj)
	}
	return DerivedFromDigests(key, digests)
}
