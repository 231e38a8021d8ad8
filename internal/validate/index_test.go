package validate

import (
	"bytes"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// sameSchema fails t unless got, read by its index, holds exactly want's definitions, byte for
// byte, and kinds.
func sameSchema(t *testing.T, got, want *ServerSchema) {
	t.Helper()
	if !reflect.DeepEqual(got.kinds, want.kinds) {
		t.Errorf("kinds:\n got %v\nwant %v", got.kinds, want.kinds)
	}
	if len(got.at) != len(want.definitions) {
		t.Errorf("%d definitions, want %d", len(got.at), len(want.definitions))
	}
	for name, raw := range want.definitions {
		if b, ok, err := got.definition(name); err != nil || !ok || !bytes.Equal(b, raw) {
			t.Errorf("definition %s (%v, %v):\n got %.80s\nwant %.80s", name, ok, err, b, raw)
		}
	}
}

// bytesRange reads doc (a DocumentRange).
func bytesRange(doc []byte) DocumentRange {
	return func(start, end int) ([]byte, error) { return doc[start:end:end], nil }
}

// A document read by its index holds what reading it whole gives: every definition, byte for
// byte, and every kind; and it checks objects as that does.
func TestReadIndexedServerSchema_readsWhatParsingFinds(t *testing.T) {
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
				indexed, err := ReadIndexedServerSchema(bytesRange(doc), len(doc), index)
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
	server, err := ReadIndexedServerSchema(bytesRange(doc), len(doc), index)
	if err != nil {
		t.Fatal(err)
	}
	findings := Check(objectsOf(t, serverSchemaObjects), Options{Target: mustVersion(t, "1.37"), Server: map[schema.GroupVersion]*ServerSchema{{Group: "apps", Version: "v1"}: server}})
	want := Finding{Problem: InvalidField, Key: "Deployment.apps/web", Schema: ClusterSchema, Fields: []FieldError{{Path: ".spec.selector", Message: undeclaredField}}}
	if got := summarize(findings); len(got) == 0 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("findings %+v, want first %+v", got, want)
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

// A document read a part at a time by its index reads only the definitions a check of its kinds
// reaches, and checks objects as the document read whole does.
func TestReadIndexedServerSchema_readsOnlyWhatAKindReaches(t *testing.T) {
	// The fixture's three definitions, and one of a kind no object here is of.
	doc := []byte(strings.Replace(fixture(t, "openapi-apps-v1.json"), `"schemas": {`,
		`"schemas": {"io.k8s.api.apps.v1.StatefulSetSpec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},`, 1))
	index, err := IndexDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	var reads []string
	read := func(start, end int) ([]byte, error) {
		for name, at := range index.Definitions {
			if at == [2]int{start, end} {
				reads = append(reads, name)
			}
		}
		return doc[start:end:end], nil
	}
	server, err := ReadIndexedServerSchema(read, len(doc), index)
	if err != nil {
		t.Fatal(err)
	}
	if len(reads) != 0 {
		t.Errorf("reading the schema read %d definitions before any check", len(reads))
	}
	apps := schema.GroupVersion{Group: "apps", Version: "v1"}
	findings := Check(objectsOf(t, serverSchemaObjects), Options{Target: mustVersion(t, "1.37"), Server: map[schema.GroupVersion]*ServerSchema{apps: server}})
	want := Finding{Problem: InvalidField, Key: "Deployment.apps/web", Schema: ClusterSchema, Fields: []FieldError{{Path: ".spec.selector", Message: undeclaredField}}}
	if got := summarize(findings); len(got) == 0 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("findings %+v, want first %+v", got, want)
	}
	if len(reads) == 0 || len(reads) >= len(index.Definitions) {
		t.Errorf("checking a Deployment read %d of %d definitions", len(reads), len(index.Definitions))
	}
	if slices.Contains(reads, "io.k8s.api.apps.v1.StatefulSetSpec") {
		t.Error("checking a Deployment read the StatefulSet's spec")
	}
}

// A document read a part at a time refuses an offset outside it when it is read, and a
// definition misplaced or unreadable when a check reaches it: that check is not built, and
// says why.
func TestReadIndexedServerSchema_refusesWhatDoesNotFit(t *testing.T) {
	doc := []byte(fixture(t, "openapi-apps-v1.json"))
	index, err := IndexDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	read := bytesRange(doc)
	const deployment = "io.k8s.api.apps.v1.Deployment"
	at := index.Definitions[deployment]
	withDeploymentAt := func(at [2]int) DocumentIndex {
		copied := DocumentIndex{Definitions: maps.Clone(index.Definitions), Kinds: index.Kinds}
		copied.Definitions[deployment] = at
		return copied
	}
	for name, at := range map[string][2]int{"past the end": {at[0], len(doc) + 1}, "before the start": {-1, at[1]}} {
		if _, err := ReadIndexedServerSchema(read, len(doc), withDeploymentAt(at)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	unplaced := DocumentIndex{Definitions: maps.Clone(index.Definitions), Kinds: index.Kinds}
	delete(unplaced.Definitions, deployment)
	for name, index := range map[string]DocumentIndex{"a kind unplaced": unplaced, "empty": {Kinds: index.Kinds}} {
		if _, err := ReadIndexedServerSchema(read, len(doc), index); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	deploymentKind := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	for name, tc := range map[string]struct {
		index DocumentIndex
		read  DocumentRange
	}{
		"shifted":    {withDeploymentAt([2]int{at[0] + 1, at[1]}), read},
		"unreadable": {index, func(int, int) ([]byte, error) { return nil, errors.New("a piece cut short") }},
	} {
		server, err := ReadIndexedServerSchema(tc.read, len(doc), tc.index)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := server.checker([]schema.GroupVersionKind{deploymentKind}); err == nil || !strings.Contains(err.Error(), deployment) {
			t.Errorf("%s: the check of a Deployment was built, or its error does not name %s: %v", name, deployment, err)
		}
	}
}
