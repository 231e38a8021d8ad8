package kube

import (
	"encoding/json"
	"io/fs"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/openapi"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// oneDocumentIndex serves one shipped document as the API server's OpenAPI v3 index would.
type oneDocumentIndex struct {
	path string
	doc  []byte
}

func (s oneDocumentIndex) Paths() (map[string]openapi.GroupVersion, error) {
	return map[string]openapi.GroupVersion{s.path: oneDocument(s.doc)}, nil
}

type oneDocument []byte

func (d oneDocument) Schema(string) ([]byte, error) { return d, nil }
func (d oneDocument) ServerRelativeURL() string     { return "" }

// For every kind of every shipped document, its index lists it as validated by the server
// exactly when kubectl's own check (the one Helm's Build runs) finds, in the document, that its
// PATCH takes fieldValidation: ServesFieldValidation answers as kubectl would.
func TestSeeds_indexListsWhatKubectlFindsTheServerValidates(t *testing.T) {
	docs, err := fs.Glob(seeds, "seeds/*/*.json.gz")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no shipped document: %v", err)
	}
	validated := 0
	for _, name := range docs {
		b, err := readSeed(seeds, name)
		if err != nil {
			t.Fatal(err)
		}
		index := readSeedIndex(seeds, seedIndexName(name))
		if index == nil {
			t.Fatalf("%s has no index", name)
		}
		type operation struct {
			GVK *schema.GroupVersionKind `json:"x-kubernetes-group-version-kind"`
		}
		var doc struct {
			Paths map[string]struct {
				Get, Put, Post, Delete, Patch *operation
			} `json:"paths"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		gvPath := strings.ReplaceAll(strings.Split(name[strings.LastIndex(name, "/")+1:], "-")[0], "_", "/")
		// Every kind the document names, in operations or definitions, and one it does not;
		// kubectl reads another group version's document for the kinds of that group version.
		kinds := map[schema.GroupVersionKind]bool{}
		for _, p := range doc.Paths {
			for _, op := range []*operation{p.Get, p.Put, p.Post, p.Delete, p.Patch} {
				if op != nil && op.GVK != nil && openAPIPath(op.GVK.GroupVersion()) == gvPath {
					kinds[*op.GVK] = true
				}
			}
		}
		for _, k := range index.Kinds {
			if gvk := (schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}); openAPIPath(gvk.GroupVersion()) == gvPath {
				kinds[gvk] = true
			}
		}
		for gvk := range kinds {
			kinds[gvk.GroupVersion().WithKind("NoSuchKind")] = true
			break
		}
		verifier := resource.NewQueryParamVerifierV3(nil, oneDocumentIndex{path: gvPath, doc: b}, resource.QueryParamFieldValidation)
		for gvk := range kinds {
			// Any error but nil (the parameter unsupported, no PATCH for the kind) leaves the kind
			// to kubectl, which answers it itself.
			err := verifier.HasSupport(gvk)
			if listed := validate.Has(index.FieldValidation, gvk); listed != (err == nil) {
				t.Errorf("%s: %s: the index lists it as validated by the server: %v; kubectl finds: %v", name, gvk, listed, err)
			}
			if err == nil {
				validated++
			}
		}
	}
	if validated == 0 {
		t.Fatal("kubectl finds no kind validated by the server in any shipped document")
	}
}

// A kind is known to be validated by the server when the documents shipped for the server's
// Kubernetes version list it so: not a kind of another version, of a group version not shipped
// (a CRD's, a beta one), nor one whose PATCH does not take fieldValidation.
func TestFieldValidatedIn(t *testing.T) {
	deployment := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	for _, tc := range []struct {
		version string
		gvk     schema.GroupVersionKind
		want    bool
	}{
		{"v1.37.2", deployment, true},
		{"v1.37.2", schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, true},
		{"v1.34.0-eks-1a2b3c", schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}, true},
		{"v1.37.2", schema.GroupVersionKind{Version: "v1", Kind: "PodProxyOptions"}, false},
		{"v1.37.2", schema.GroupVersionKind{Version: "v1", Kind: "NoSuchKind"}, false},
		{"v1.37.2", schema.GroupVersionKind{Group: "apps", Version: "v1beta1", Kind: "Deployment"}, false},
		{"v1.37.2", schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, false},
		{"v1.20.0", deployment, false},
		{"", deployment, false},
		{"1.37", deployment, false},
	} {
		if got := fieldValidatedIn(seeds, tc.version, tc.gvk); got != tc.want {
			t.Errorf("fieldValidatedIn(%q, %s) = %v, want %v", tc.version, tc.gvk, got, tc.want)
		}
	}
}

// BenchmarkFieldValidatedIn is the check Helm's Build makes for every object it builds.
func BenchmarkFieldValidatedIn(b *testing.B) {
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	for b.Loop() {
		fieldValidatedIn(seeds, "v1.37.2", gvk)
	}
}
