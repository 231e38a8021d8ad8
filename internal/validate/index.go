package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DocumentIndex says where each definition of an OpenAPI v3 document lies in the document, and
// which kinds the document defines: what ParseServerSchema reads the whole document for. A
// document read by every plan (one shipped in the binary) keeps its index beside it, so that
// reading it is a lookup instead of a pass over its megabytes (api/v1's is 1.6 MB).
type DocumentIndex struct {
	// Definitions maps each definition's name to where its JSON lies in the document: the
	// offsets of its first byte and of the byte after its last.
	Definitions map[string][2]int `json:"definitions"`
	// Kinds lists the kinds the document defines, each with the name of its definition.
	Kinds []IndexedKind `json:"kinds"`
	// FieldValidation lists the kinds whose PATCH, by the document, takes the fieldValidation
	// query parameter: the API server validates their fields itself, and kubectl's field
	// validation (Helm's Build runs it) checks nothing on the client for them. It is kubectl's
	// answer (queryParamVerifierV3), read once for a shipped document instead of every apply.
	FieldValidation []IndexedGVK `json:"fieldValidation,omitempty"`
}

// IndexedGVK is a kind of a DocumentIndex by its group, version and name.
type IndexedGVK struct {
	Group   string `json:"group,omitempty"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// Has reports whether gvks holds gvk.
func Has(gvks []IndexedGVK, gvk schema.GroupVersionKind) bool {
	return slices.Contains(gvks, IndexedGVK{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind})
}

// IndexedKind is one kind of a DocumentIndex and the name of the definition of its schema.
type IndexedKind struct {
	Group      string `json:"group,omitempty"`
	Version    string `json:"version"`
	Kind       string `json:"kind"`
	Definition string `json:"definition"`
}

// IndexDocument reads an OpenAPI v3 document (JSON) whole and returns its index, which
// ReadIndexedServerSchema reads the document by as ParseServerSchema would.
func IndexDocument(doc []byte) (DocumentIndex, error) {
	parsed, err := ParseServerSchema(doc)
	if err != nil {
		return DocumentIndex{}, err
	}
	offsets, err := definitionOffsets(doc)
	if err != nil {
		return DocumentIndex{}, fmt.Errorf("index OpenAPI v3 document: %w", err)
	}
	index := DocumentIndex{Definitions: offsets}
	for gvk, name := range parsed.kinds {
		index.Kinds = append(index.Kinds, IndexedKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Definition: name})
	}
	sort.Slice(index.Kinds, func(i, j int) bool {
		a, b := index.Kinds[i], index.Kinds[j]
		return lessGVK(schema.GroupVersionKind{Group: a.Group, Version: a.Version, Kind: a.Kind}, schema.GroupVersionKind{Group: b.Group, Version: b.Version, Kind: b.Kind})
	})
	if index.FieldValidation, err = fieldValidated(doc); err != nil {
		return DocumentIndex{}, fmt.Errorf("index OpenAPI v3 document: %w", err)
	}
	return index, nil
}

func lessGVK(a, b schema.GroupVersionKind) bool {
	if a.Group != b.Group {
		return a.Group < b.Group
	}
	if a.Version != b.Version {
		return a.Version < b.Version
	}
	return a.Kind < b.Kind
}

// fieldValidated returns the kinds for which some PATCH operation of doc takes the
// fieldValidation query parameter, sorted, as kubectl's queryParamVerifierV3 decides it: a
// parameter of the operation itself of that name in the query, or a reference to one under
// "#/parameters/" among the document's components.
func fieldValidated(doc []byte) ([]IndexedGVK, error) {
	type parameter struct {
		Name string `json:"name"`
		In   string `json:"in"`
		Ref  string `json:"$ref"`
	}
	var d struct {
		Paths map[string]struct {
			Patch *struct {
				GVK        *schema.GroupVersionKind `json:"x-kubernetes-group-version-kind"`
				Parameters []parameter              `json:"parameters"`
			} `json:"patch"`
		} `json:"paths"`
		Components struct {
			Parameters map[string]parameter `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	takes := func(p parameter) bool {
		if p.Name == "fieldValidation" && p.In == "query" {
			return true
		}
		if k, ok := strings.CutPrefix(p.Ref, "#/parameters/"); ok {
			if global, ok := d.Components.Parameters[k]; ok && global.In == "query" && global.Name == "fieldValidation" {
				return true
			}
		}
		return false
	}
	seen := map[schema.GroupVersionKind]bool{}
	for _, path := range d.Paths {
		if path.Patch == nil || path.Patch.GVK == nil || seen[*path.Patch.GVK] {
			continue
		}
		if slices.ContainsFunc(path.Patch.Parameters, takes) {
			seen[*path.Patch.GVK] = true
		}
	}
	gvks := slices.Collect(maps.Keys(seen))
	slices.SortFunc(gvks, func(a, b schema.GroupVersionKind) int {
		switch {
		case lessGVK(a, b):
			return -1
		case lessGVK(b, a):
			return 1
		}
		return 0
	})
	out := make([]IndexedGVK, len(gvks))
	for i, gvk := range gvks {
		out[i] = IndexedGVK{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
	}
	return out, nil
}

// definitionOffsets walks doc's tokens to components.schemas and returns where each
// definition's value lies.
func definitionOffsets(doc []byte) (map[string][2]int, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	offsets := map[string][2]int{}
	found := false
	err := eachMember(dec, func(key string) error {
		if key != "components" {
			return skipValue(dec)
		}
		return eachMember(dec, func(key string) error {
			if key != "schemas" {
				return skipValue(dec)
			}
			found = true
			return eachMember(dec, func(name string) error {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return err
				}
				end := int(dec.InputOffset())
				offsets[name] = [2]int{end - len(raw), end}
				return nil
			})
		})
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errors.New("it has no components.schemas")
	}
	return offsets, nil
}

// eachMember reads the object dec is at, calling member with each key while dec stands before
// its value, which member must read.
func eachMember(dec *json.Decoder, member func(key string) error) error {
	if t, err := dec.Token(); err != nil {
		return err
	} else if t != json.Delim('{') {
		return fmt.Errorf("expected an object at byte %d", dec.InputOffset())
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := t.(string)
		if !ok {
			return fmt.Errorf("expected a key at byte %d", dec.InputOffset())
		}
		if err := member(key); err != nil {
			return err
		}
	}
	_, err := dec.Token() // the closing brace
	return err
}

func skipValue(dec *json.Decoder) error {
	var skipped json.RawMessage
	return dec.Decode(&skipped)
}

// DocumentRange returns the bytes of an OpenAPI v3 document from offset start to offset end,
// reading no more of the document than it must. It may be called from several goroutines at
// once.
type DocumentRange func(start, end int) ([]byte, error)

// ReadIndexedServerSchema reads a document of size bytes by its index, read giving it a part at
// a time: what ParseServerSchema returns, without a pass over the document. A definition is
// read when the check of a kind whose schema reaches it is first built, so a release's few
// kinds read a few of a document's definitions. An offset
// outside the document is an error here; a definition that is not a JSON object where the
// index places it is found when it is read, and the check that reaches it is not built.
func ReadIndexedServerSchema(read DocumentRange, size int, index DocumentIndex) (*ServerSchema, error) {
	if len(index.Definitions) == 0 {
		return nil, errors.New("read OpenAPI v3 document by its index: the index has no definitions")
	}
	for name, at := range index.Definitions {
		if start, end := at[0], at[1]; start < 0 || end > size || end-start < 2 {
			return nil, fmt.Errorf("read OpenAPI v3 document by its index: definition %s is not at bytes %d to %d", name, start, end)
		}
	}
	kinds, err := indexedKinds(index)
	if err != nil {
		return nil, err
	}
	return &ServerSchema{read: read, at: index.Definitions, kinds: kinds, converters: map[string]*converterEntry{}}, nil
}

// indexedKinds maps the kinds of index to the names of their definitions, each of which the
// index must place.
func indexedKinds(index DocumentIndex) (map[schema.GroupVersionKind]string, error) {
	kinds := make(map[schema.GroupVersionKind]string, len(index.Kinds))
	for _, k := range index.Kinds {
		if _, ok := index.Definitions[k.Definition]; !ok {
			return nil, fmt.Errorf("read OpenAPI v3 document by its index: kind %s has definition %s, which the index does not place", k.Kind, k.Definition)
		}
		kinds[schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}] = k.Definition
	}
	return kinds, nil
}
