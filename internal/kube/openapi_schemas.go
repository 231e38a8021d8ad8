package kube

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// SchemaTimeout bounds the time ServerSchemas waits for the API server's OpenAPI documents:
// the schemas only sharpen a check that works without them, so a slow API server costs a plan
// this long at most.
var SchemaTimeout = 30 * time.Second

// DocumentLister lists the API server's OpenAPI v3 documents (Clients does).
type DocumentLister interface {
	OpenAPIDocuments(ctx context.Context, gvs []schema.GroupVersion) ([]OpenAPIDocument, error)
}

// ServerSchemas returns the API server's schemas of gvs, fetched and parsed once per process
// and document revision, so a configuration of many releases pays once. What cannot be fetched
// in time is left out, and errs say why: one error for the index, or one per document.
func ServerSchemas(ctx context.Context, lister DocumentLister, gvs []schema.GroupVersion) (map[schema.GroupVersion]*validate.ServerSchema, []error) {
	ctx, cancel := context.WithTimeout(ctx, SchemaTimeout)
	defer cancel()
	docs, err := lister.OpenAPIDocuments(ctx, gvs)
	if err != nil {
		return nil, []error{err}
	}
	schemas := make([]*validate.ServerSchema, len(docs))
	errs := make([]error, len(docs))
	var wg sync.WaitGroup
	for i, d := range docs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			schemas[i], errs[i] = serverSchemas.get(ctx, d)
		}()
	}
	wg.Wait()
	out := make(map[schema.GroupVersion]*validate.ServerSchema, len(docs))
	var failed []error
	for i, d := range docs {
		if schemas[i] != nil {
			out[d.GroupVersion] = schemas[i]
		}
		if errs[i] != nil {
			failed = append(failed, errs[i])
		}
	}
	return out, failed
}

// ServerSchemas returns the schemas of gvs the API server publishes (ServerSchemas).
func (c *Clients) ServerSchemas(ctx context.Context, gvs []schema.GroupVersion) (map[schema.GroupVersion]*validate.ServerSchema, []error) {
	return ServerSchemas(ctx, c, gvs)
}

// serverSchemas holds, for the life of the process, every schema an API server's OpenAPI
// document was parsed into, by the document's key (server and content hash).
var serverSchemas = &schemaCache{entries: map[string]*schemaEntry{}}

type schemaCache struct {
	mu      sync.Mutex
	entries map[string]*schemaEntry
}

type schemaEntry struct {
	once   sync.Once
	schema *validate.ServerSchema
	err    error
}

// get returns the schema of doc, read from the binary when it is shipped (a shipped document
// that cannot be read is fetched instead), else fetched and parsed, on the first call for its key;
// concurrent callers wait for that one. A failure is not kept: the next call tries again.
func (c *schemaCache) get(ctx context.Context, doc OpenAPIDocument) (*validate.ServerSchema, error) {
	c.mu.Lock()
	e := c.entries[doc.Key]
	if e == nil {
		e = &schemaEntry{}
		c.entries[doc.Key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		if doc.Shipped != nil {
			if e.schema, e.err = doc.Shipped(); e.err == nil {
				return
			}
		}
		b, err := doc.Fetch(ctx)
		if err != nil {
			e.err = err
			return
		}
		e.schema, e.err = validate.ParseServerSchema(b)
	})
	if e.err != nil {
		c.mu.Lock()
		if c.entries[doc.Key] == e {
			delete(c.entries, doc.Key)
		}
		c.mu.Unlock()
	}
	return e.schema, e.err
}
