package kube

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/openapi"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// OpenAPIDocument is the OpenAPI v3 document of one group version, as the API server publishes
// it: its built-in kinds at the server's version and the custom resources installed there.
type OpenAPIDocument struct {
	GroupVersion schema.GroupVersion
	// Key identifies this revision of the document on this API server: the server's address and
	// the document's URL, which carries a hash of its content. A cache keyed by it never serves
	// a schema the server has since changed (a CRD updated).
	Key string
	// Shipped, set when the provider ships the document (seeds), reads its schema from the
	// binary by its index, no request made.
	Shipped func() (*validate.ServerSchema, error)
	// Fetch reads the document, as JSON, from the cache folder when an earlier process
	// downloaded the same revision, else downloads it.
	Fetch func(ctx context.Context) ([]byte, error)
}

// OpenAPIDocuments lists the OpenAPI v3 documents the API server publishes for gvs, in the
// order of gvs; group versions it publishes none for (kinds it does not serve) are left out.
// It reads the index of the documents (/openapi/v3), one request; a built-in document of a
// Kubernetes version shipped is read from the binary (Shipped), any other is fetched.
func (c *Clients) OpenAPIDocuments(ctx context.Context, gvs []schema.GroupVersion) ([]OpenAPIDocument, error) {
	client := openapi.NewClientWithContext(c.Kubernetes.Discovery().RESTClient())
	paths, err := client.PathsWithContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the OpenAPI v3 documents of %s: %w", c.Source, refusalOf(err, "get", "", "openapi/v3", "", ""))
	}
	docs := make([]OpenAPIDocument, 0, len(gvs))
	for _, gv := range gvs {
		published, ok := paths[openAPIPath(gv)]
		if !ok {
			continue
		}
		hash, hashed := documentHash(published.ServerRelativeURL())
		doc := OpenAPIDocument{
			GroupVersion: gv,
			Key:          c.Config.Host + published.ServerRelativeURL(),
			Fetch: func(ctx context.Context) ([]byte, error) {
				if hashed {
					if b, ok := c.documents.get(openAPIPath(gv), hash); ok {
						return b, nil
					}
				}
				b, err := published.SchemaWithContext(ctx, "application/json")
				if err != nil {
					return nil, fmt.Errorf("fetch the OpenAPI v3 document of %s from %s: %w", gv, c.Source, err)
				}
				if hashed {
					c.documents.put(openAPIPath(gv), hash, b)
				}
				return b, nil
			},
		}
		if hashed && shipped(openAPIPath(gv), hash) {
			doc.Shipped = func() (*validate.ServerSchema, error) { return seededSchema(openAPIPath(gv), hash) }
		}
		docs = append(docs, doc)
	}
	return docs, nil
}

// openAPIPath is the index's name of gv's document: api/v1 for the core group, else
// apis/<group>/<version>.
func openAPIPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}
