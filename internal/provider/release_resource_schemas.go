package provider

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// clusterSchemaTimeout bounds the time a plan waits for the cluster's OpenAPI documents.
var clusterSchemaTimeout = 30 * time.Second

// openAPIDocumentLister lists the API server's OpenAPI v3 documents (kube.Clients does).
type openAPIDocumentLister interface {
	OpenAPIDocuments(ctx context.Context, gvs []schema.GroupVersion) ([]kube.OpenAPIDocument, error)
}

// clusterSchemas returns the API server's schemas of the group versions objs use, for the
// plan's field check: fetched and parsed once per process and document revision (serverSchemas),
// so a configuration of many releases pays once. What cannot be fetched is left out, and those
// objects are checked against the shipped schema; the log says why.
func clusterSchemas(ctx context.Context, m *releaseModel, lister openAPIDocumentLister, objs []validate.Object) map[schema.GroupVersion]*validate.ServerSchema {
	// The schemas only sharpen a check that works without them: a slow API server costs the
	// plan this long at most.
	ctx, cancel := context.WithTimeout(ctx, clusterSchemaTimeout)
	defer cancel()
	docs, err := lister.OpenAPIDocuments(ctx, groupVersionsOf(objs))
	if err != nil {
		tflog.Warn(ctx, "the cluster's OpenAPI schemas are not available; fields are checked against the shipped schema", map[string]any{"release": m.releaseID(), "error": redactorFor(m).String(err.Error())})
		return nil
	}
	// Made here, in the request's goroutine: the fetches below log with it concurrently.
	redactor := redactorFor(m)
	schemas := make([]*validate.ServerSchema, len(docs))
	var wg sync.WaitGroup
	for i, d := range docs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := serverSchemas.get(ctx, d)
			if err != nil {
				tflog.Warn(ctx, "the cluster's OpenAPI schema of "+d.GroupVersion.String()+" is not available; its objects are checked against the shipped schema", map[string]any{"release": m.releaseID(), "error": redactor.String(err.Error())})
			}
			schemas[i] = s
		}()
	}
	wg.Wait()
	out := make(map[schema.GroupVersion]*validate.ServerSchema, len(docs))
	for i, d := range docs {
		if schemas[i] != nil {
			out[d.GroupVersion] = schemas[i]
		}
	}
	return out
}

// groupVersionsOf returns the distinct group versions of objs, in their order.
func groupVersionsOf(objs []validate.Object) []schema.GroupVersion {
	seen := map[schema.GroupVersion]bool{}
	var out []schema.GroupVersion
	for _, o := range objs {
		apiVersion, _ := o.Object["apiVersion"].(string)
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil || apiVersion == "" || seen[gv] {
			continue
		}
		seen[gv] = true
		out = append(out, gv)
	}
	return out
}

// serverSchemas holds, for the life of the provider process, every schema an API server's
// OpenAPI document was parsed into, by the document's key (server and content hash).
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

// get returns the schema of doc, fetching and parsing it on the first call for its key;
// concurrent callers wait for that one. A failure is not kept: the next call tries again.
func (c *schemaCache) get(ctx context.Context, doc kube.OpenAPIDocument) (*validate.ServerSchema, error) {
	c.mu.Lock()
	e := c.entries[doc.Key]
	if e == nil {
		e = &schemaEntry{}
		c.entries[doc.Key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
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
