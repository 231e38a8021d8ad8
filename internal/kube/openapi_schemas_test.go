package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// appsDocument is the OpenAPI v3 document of apps/v1 the validate package tests with.
func appsDocument(t *testing.T) []byte {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "validate", "testdata", "openapi-apps-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// A document is fetched once per key, however many releases ask at once; a failed fetch is
// tried again by the next plan.
func TestSchemaCache_fetchesOncePerKeyAndRetriesFailures(t *testing.T) {
	doc := appsDocument(t)
	cache := &schemaCache{entries: map[string]*schemaEntry{}}
	var fetches atomic.Int32
	fail := atomic.Bool{}
	fail.Store(true)
	d := OpenAPIDocument{Key: "https://127.0.0.1/openapi/v3/apis/apps/v1?hash=1", Fetch: func(context.Context) ([]byte, error) {
		fetches.Add(1)
		if fail.Load() {
			return nil, errors.New("connection reset")
		}
		return doc, nil
	}}
	if _, err := cache.get(context.Background(), d); err == nil {
		t.Fatal("a failed fetch gave no error")
	}
	fail.Store(false)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s, err := cache.get(context.Background(), d); err != nil || s == nil {
				t.Errorf("get = %v, %v", s, err)
			}
		}()
	}
	wg.Wait()
	if n := fetches.Load(); n != 2 {
		t.Errorf("fetched %d times, want 2 (the failure, then once for all)", n)
	}
}

// documentLister hands out fixed documents, as Clients.OpenAPIDocuments would.
type documentLister []OpenAPIDocument

func (l documentLister) OpenAPIDocuments(context.Context, []schema.GroupVersion) ([]OpenAPIDocument, error) {
	return l, nil
}

// A document that does not come in time is left out, and its objects are checked against the
// shipped schema; ServerSchemas waits no longer than SchemaTimeout, and says why it is missing.
func TestServerSchemas_aSlowDocumentIsLeftOut(t *testing.T) {
	doc := appsDocument(t)
	defer func(d time.Duration) { SchemaTimeout = d }(SchemaTimeout)
	SchemaTimeout = 200 * time.Millisecond
	apps := schema.GroupVersion{Group: "apps", Version: "v1"}
	core := schema.GroupVersion{Version: "v1"}
	lister := documentLister{
		{GroupVersion: apps, Key: t.Name() + "/apps/v1", Fetch: func(context.Context) ([]byte, error) { return doc, nil }},
		{GroupVersion: core, Key: t.Name() + "/v1", Fetch: func(ctx context.Context) ([]byte, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}},
	}
	start := time.Now()
	got, errs := ServerSchemas(context.Background(), lister, nil)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("waited %s for a document that never came", elapsed)
	}
	if got[apps] == nil || got[core] != nil || len(got) != 1 {
		t.Errorf("schemas = %v, want apps/v1 alone", got)
	}
	if len(errs) != 1 || !errors.Is(errs[0], context.DeadlineExceeded) {
		t.Errorf("errors = %v, want the slow document's deadline", errs)
	}
}

// Documents that fail together are each left out, each with its error.
func TestServerSchemas_failuresAreEachSaid(t *testing.T) {
	var lister documentLister
	for i := range 8 {
		gv := schema.GroupVersion{Group: fmt.Sprintf("g%d.example.com", i), Version: "v1"}
		lister = append(lister, OpenAPIDocument{GroupVersion: gv, Key: t.Name() + "/" + gv.String(), Fetch: func(context.Context) ([]byte, error) {
			return nil, fmt.Errorf("%s unavailable", gv)
		}})
	}
	got, errs := ServerSchemas(context.Background(), lister, nil)
	if len(got) != 0 || len(errs) != 8 {
		t.Errorf("ServerSchemas = %d schemas, %d errors; want none and 8", len(got), len(errs))
	}
}

// A shipped document is read from the binary, nothing fetched; one that cannot be read so is
// fetched and read whole, as a document not shipped is.
func TestSchemaCache_readsAShippedDocumentAndFetchesWhatItCannot(t *testing.T) {
	_, doc := shippedDocument(t, "apis/apps/v1")
	index, err := validate.IndexDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	deployment := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	statefulSet := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}
	// Read from the binary, Deployment alone: what the cache holds tells which way it read.
	var alone []validate.IndexedKind
	for _, k := range index.Kinds {
		if k.Kind == "Deployment" {
			alone = append(alone, k)
		}
	}
	deploymentOnly := func() (*validate.ServerSchema, error) {
		read := func(start, end int) ([]byte, error) { return doc[start:end:end], nil }
		return validate.ReadIndexedServerSchema(read, len(doc), validate.DocumentIndex{Definitions: index.Definitions, Kinds: alone})
	}
	unreadable := func() (*validate.ServerSchema, error) { return nil, errors.New("piece 3 cut short") }
	for _, tc := range []struct {
		name        string
		shipped     func() (*validate.ServerSchema, error)
		statefulSet bool
		fetches     int32
	}{
		{"shipped", deploymentOnly, false, 0},
		{"shipped, unreadable", unreadable, true, 1},
		{"not shipped", nil, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := &schemaCache{entries: map[string]*schemaEntry{}}
			var fetches atomic.Int32
			d := OpenAPIDocument{Key: t.Name(), Shipped: tc.shipped, Fetch: func(context.Context) ([]byte, error) {
				fetches.Add(1)
				return doc, nil
			}}
			s, err := cache.get(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			if !s.Defines(deployment) || s.Defines(statefulSet) != tc.statefulSet {
				t.Errorf("defines Deployment %v, StatefulSet %v; want true, %v", s.Defines(deployment), s.Defines(statefulSet), tc.statefulSet)
			}
			if n := fetches.Load(); n != tc.fetches {
				t.Errorf("fetched %d times, want %d", n, tc.fetches)
			}
		})
	}
}
