package validate

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// sameSchema fails t unless got holds exactly want's definitions, byte for byte, and kinds.
func sameSchema(t *testing.T, got, want *ServerSchema) {
	t.Helper()
	if !reflect.DeepEqual(got.kinds, want.kinds) {
		t.Errorf("kinds:\n got %v\nwant %v", got.kinds, want.kinds)
	}
	if len(got.definitions) != len(want.definitions) {
		t.Errorf("%d definitions, want %d", len(got.definitions), len(want.definitions))
	}
	for name, raw := range want.definitions {
		if !bytes.Equal(got.definitions[name], raw) {
			t.Errorf("definition %s:\n got %.80s\nwant %.80s", name, got.definitions[name], raw)
		}
	}
}

// A document read by its index holds what reading it whole gives: every definition, byte for
// byte, and every kind; and it checks objects as that does.
func TestIndexedServerSchema_readsWhatParsingFinds(t *testing.T) {
	for _, name := range []string{"openapi-apps-v1.json", "openapi-refs.json"} {
		t.Run(name, func(t *testing.T) {
			doc := []byte(fixture(t, name))
			// Spaces between tokens, as a document written by hand may have: offsets still fit.
			spaced := bytes.ReplaceAll(doc, []byte(`":{`), []byte("\" :\n  {"))
			for _, doc := range [][]byte{doc, spaced} {
				parsed, err := ParseServerSchema(doc)
				if err != nil {
					t.Fatal(err)
				}
				index, err := IndexDocument(doc)
				if err != nil {
					t.Fatal(err)
				}
				indexed, err := IndexedServerSchema(doc, index)
				if err != nil {
					t.Fatal(err)
				}
				sameSchema(t, indexed, parsed)
			}
		})
	}
	doc := []byte(fixture(t, "openapi-apps-v1.json"))
	index, err := IndexDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	server, err := IndexedServerSchema(doc, index)
	if err != nil {
		t.Fatal(err)
	}
	findings := Check(objectsOf(t, serverSchemaObjects), Options{Target: mustVersion(t, "1.37"), Server: map[schema.GroupVersion]*ServerSchema{{Group: "apps", Version: "v1"}: server}})
	want := Finding{Problem: InvalidField, Key: "Deployment.apps/web", Schema: ClusterSchema, Fields: []FieldError{{Path: ".spec.selector", Message: undeclaredField}}}
	if got := summarize(findings); len(got) == 0 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("findings %+v, want first %+v", got, want)
	}
}

// An index that does not fit the document is refused, not read into wrong definitions.
func TestIndexedServerSchema_refusesAnIndexThatDoesNotFit(t *testing.T) {
	doc := []byte(fixture(t, "openapi-apps-v1.json"))
	index, err := IndexDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	const deployment = "io.k8s.api.apps.v1.Deployment"
	at, ok := index.Definitions[deployment]
	if !ok {
		t.Fatalf("the index does not place %s", deployment)
	}
	for name, broken := range map[string]func(*DocumentIndex){
		"shifted":          func(i *DocumentIndex) { i.Definitions[deployment] = [2]int{at[0] + 1, at[1]} },
		"past the end":     func(i *DocumentIndex) { i.Definitions[deployment] = [2]int{at[0], len(doc) + 1} },
		"before the start": func(i *DocumentIndex) { i.Definitions[deployment] = [2]int{-1, at[1]} },
		"a kind unplaced":  func(i *DocumentIndex) { delete(i.Definitions, deployment) },
		"empty":            func(i *DocumentIndex) { i.Definitions = nil },
	} {
		t.Run(name, func(t *testing.T) {
			copied := DocumentIndex{Definitions: map[string][2]int{}, Kinds: index.Kinds}
			for k, v := range index.Definitions {
				copied.Definitions[k] = v
			}
			broken(&copied)
			if s, err := IndexedServerSchema(doc, copied); err == nil {
				t.Errorf("read by a broken index: %d definitions, no error", len(s.definitions))
			}
		})
	}
}

// A document without definitions has no index.
func TestIndexDocument_refusesADocumentWithoutDefinitions(t *testing.T) {
	for _, doc := range []string{`{"openapi":"3.0.0"}`, `{"openapi":"3.0.0","components":{"schemas":{}}}`, `[1]`, `{"components":`} {
		if _, err := IndexDocument([]byte(doc)); err == nil {
			t.Errorf("IndexDocument(%s): no error", doc)
		}
	}
	if _, err := definitionOffsets([]byte(`{"openapi":"3.0.0","components":{"other":{}}}`)); err == nil || !strings.Contains(err.Error(), "components.schemas") {
		t.Errorf("definitionOffsets without schemas: %v", err)
	}
}
