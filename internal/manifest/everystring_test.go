package manifest

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every string of an object is hidden whole, whatever the chart made of a value, except what
// names the object; numbers, booleans and the mapping keys stay.
func TestEveryString_hidesEveryStringButIdentity(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	objs := []Object{{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "web", "namespace": "review", "labels": map[string]any{"app": "web", "tier": "frontend"}},
		"data": map[string]any{
			"dsn":   "postgres://app:Tr0ub%26dor@db/app",
			"basic": "YXBwOlRyMHViJmRvcg==",
			"upper": "TR0UB&DOR",
			"port":  int64(5432),
			"list":  []any{"nested-secret", true},
		},
	}}
	r := NewRedactor(nil, key, EveryString(key, objs))
	out, err := json.Marshal(r.Object(objs[0]))
	if err != nil {
		t.Fatal(err)
	}
	shown := string(out)
	for _, hidden := range []string{"Tr0ub", "YXBwOlRy", "TR0UB", "nested-secret", "frontend"} {
		if strings.Contains(shown, hidden) {
			t.Errorf("%q shows in %s", hidden, shown)
		}
	}
	for _, kept := range []string{`"name":"web"`, `"namespace":"review"`, `"app":"web"`, `"kind":"ConfigMap"`, `"apiVersion":"v1"`, `"port":5432`, `"dsn":`, `true`} {
		if !strings.Contains(shown, kept) {
			t.Errorf("%s is hidden in %s", kept, shown)
		}
	}
}
