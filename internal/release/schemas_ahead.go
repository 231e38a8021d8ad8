package release

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// schemasAhead is a fetch of the cluster's schemas begun before Check asks for them: the
// OpenAPI documents of the group versions of objs, parsed, and the field checks of their kinds
// built, while the plan renders the next revision on the other core (Plan).
type schemasAhead struct {
	gvs     []schema.GroupVersion
	done    chan struct{}
	schemas map[schema.GroupVersion]*validate.ServerSchema
	errs    []error
}

// fetchSchemasAhead begins fetching the schemas Check will ask for, of the group versions of
// objs, when the request's checks ask the cluster for them. Plan calls it once it knows the
// release changes, the one case Check asks: a plan that finds nothing to change asks nothing.
func (r *Request) fetchSchemasAhead(ctx context.Context, objs []validate.Object) {
	gvs := groupVersionsOf(objs)
	if !r.Checks.asksCluster() || r.schemasAhead != nil || len(gvs) == 0 {
		return
	}
	a := &schemasAhead{gvs: gvs, done: make(chan struct{})}
	r.schemasAhead = a
	c := r.Checks.Checker
	go func() {
		defer close(a.done)
		a.schemas, a.errs = c.ServerSchemas(ctx, gvs)
		if len(a.errs) == 0 {
			// The field checks Check builds for the same kinds are then built already.
			_, _ = validate.Options{Server: a.schemas}.Prepared(objs)
		}
	}()
}

// serverSchemas returns the cluster's schemas of gvs: those fetched ahead, and the rest (a
// group version the next revision brings) asked for now. A fetch ahead that failed in any
// part is not used; the schemas are asked for again, as without one.
func (r *Request) serverSchemas(ctx context.Context, gvs []schema.GroupVersion) (map[schema.GroupVersion]*validate.ServerSchema, []error) {
	a := r.schemasAhead
	if a != nil {
		select {
		case <-a.done:
		case <-ctx.Done():
			a = nil
		}
	}
	if a == nil || len(a.errs) > 0 {
		return r.Checks.Checker.ServerSchemas(ctx, gvs)
	}
	out := make(map[schema.GroupVersion]*validate.ServerSchema, len(gvs))
	var missing []schema.GroupVersion
	for _, gv := range gvs {
		switch s, ok := a.schemas[gv]; {
		case ok:
			out[gv] = s
		case !slices.Contains(a.gvs, gv):
			missing = append(missing, gv)
		}
		// A group version asked for ahead that the cluster publishes no document for stays
		// without one, as it would have been asked for now.
	}
	if len(missing) == 0 {
		return out, nil
	}
	more, errs := r.Checks.Checker.ServerSchemas(ctx, missing)
	for gv, s := range more {
		out[gv] = s
	}
	return out, errs
}
