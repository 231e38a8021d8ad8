package release

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// schemaChecker answers ServerSchemas with the apps/v1 document of validate's tests (the
// cluster publishes no other), or with failed, and records the group versions of each call.
type schemaChecker struct {
	answeringChecker
	apps *validate.ServerSchema

	mu     sync.Mutex
	calls  [][]schema.GroupVersion
	failed error
}

func newSchemaChecker(t *testing.T) *schemaChecker {
	t.Helper()
	doc, err := os.ReadFile("../validate/testdata/openapi-apps-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	apps, err := validate.ParseServerSchema(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &schemaChecker{answeringChecker: answeringChecker{namespace: map[string]string{}}, apps: apps}
}

func (c *schemaChecker) ServerSchemas(_ context.Context, gvs []schema.GroupVersion) (map[schema.GroupVersion]*validate.ServerSchema, []error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, slices.Clone(gvs))
	if c.failed != nil {
		err := c.failed
		c.failed = nil
		return nil, []error{err}
	}
	out := map[schema.GroupVersion]*validate.ServerSchema{}
	for _, gv := range gvs {
		if gv == (schema.GroupVersion{Group: "apps", Version: "v1"}) {
			out[gv] = c.apps
		}
	}
	return out, nil
}

func (c *schemaChecker) asked() [][]schema.GroupVersion {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

var (
	coreV1       = schema.GroupVersion{Version: "v1"}
	appsV1       = schema.GroupVersion{Group: "apps", Version: "v1"}
	networkingV1 = schema.GroupVersion{Group: "networking.k8s.io", Version: "v1"}
)

// planAndCheck plans in over recorded with checks that ask c, and returns the plan, the
// calls c had when Plan's fetch ahead (if any) was done, and the checks' result.
func planAndCheck(t *testing.T, in Inputs, recorded *Recorded, level CheckLevel, c *schemaChecker) (*Plan, [][]schema.GroupVersion, *Checked) {
	t.Helper()
	in.Checks = Checks{Level: level, Checker: c}
	req := Prepare(context.Background(), nil, in)
	p := planned(t, req, recorded)
	if req.schemasAhead != nil {
		<-req.schemasAhead.done
	}
	beforeCheck := c.asked()
	if p.Unchanged {
		return p, beforeCheck, nil
	}
	return p, beforeCheck, req.Check(context.Background(), p.Rendering, recorded)
}

// A plan that finds the release changes fetches the cluster's schemas of what the recorded
// revision renders while it renders the next one, and Check takes them from that fetch: one
// request of them in all. A plan that changes nothing asks for none.
func TestRequest_changedPlanFetchesSchemasAhead(t *testing.T) {
	first := planned(t, Prepare(context.Background(), nil, webInputs(nil)), nil).Rendering
	recorded := deployedAs(first.Manifests, 1)

	c := newSchemaChecker(t)
	_, beforeCheck, got := planAndCheck(t, webInputs(map[string]string{"config.greeting": "hi"}), recorded, CheckAll, c)
	if want := [][]schema.GroupVersion{{coreV1, appsV1}}; !slices.EqualFunc(beforeCheck, want, slices.Equal) {
		t.Fatalf("schemas asked for during the plan: %v, want %v", beforeCheck, want)
	}
	if calls := c.asked(); len(calls) != 1 || !got.ClusterSchemas || len(got.SchemaErrors) > 0 {
		t.Errorf("checked with cluster schemas %v (errors %v) after %d requests for them, want the schemas fetched ahead used and no request more",
			got.ClusterSchemas, got.SchemaErrors, len(calls))
	}

	c = newSchemaChecker(t)
	if p, beforeCheck, _ := planAndCheck(t, webInputs(nil), recorded, CheckAll, c); !p.Unchanged || len(beforeCheck) > 0 {
		t.Errorf("a plan that changes nothing: unchanged %v, schemas asked for %v; want none", p.Unchanged, beforeCheck)
	}
}

// What the next revision brings that the fetch ahead did not ask for (a group version) is
// asked for when Check needs it, alone; a fetch ahead that failed is not used, and a creation,
// with no recorded revision to go by, and checks that do not ask the cluster fetch nothing
// ahead.
func TestRequest_checkAsksForWhatWasNotFetchedAhead(t *testing.T) {
	first := planned(t, Prepare(context.Background(), nil, webInputs(nil)), nil).Rendering
	recorded := deployedAs(first.Manifests, 1)

	c := newSchemaChecker(t)
	withIngress := webInputs(map[string]string{"ingress.enabled": "true", "ingress.host": "web.example"})
	withIngress.Checks = Checks{Level: CheckAll, Checker: c}
	req := Prepare(context.Background(), nil, withIngress)
	next := planned(t, req, nil).Rendering
	req.fetchSchemasAhead(context.Background(), req.validateObjects(first))
	got := req.Check(context.Background(), next, nil)
	if want := [][]schema.GroupVersion{{coreV1, appsV1}, {networkingV1}}; !slices.EqualFunc(c.asked(), want, slices.Equal) || !got.ClusterSchemas {
		t.Errorf("an Ingress the fetch ahead did not expect: schemas asked for %v (cluster schemas used: %v), want %v", c.asked(), got.ClusterSchemas, want)
	}

	c = newSchemaChecker(t)
	c.failed = errors.New("the tunnel dropped the request")
	changed := webInputs(map[string]string{"config.greeting": "hi"})
	if _, _, got = planAndCheck(t, changed, recorded, CheckAll, c); len(c.asked()) != 2 || !slices.Equal(c.asked()[1], []schema.GroupVersion{coreV1, appsV1}) ||
		!got.ClusterSchemas || len(got.SchemaErrors) > 0 {
		t.Errorf("after a failed fetch ahead: asked %v, checked with cluster schemas %v (errors %v); want every group version asked for again",
			c.asked(), got.ClusterSchemas, got.SchemaErrors)
	}

	c = newSchemaChecker(t)
	if _, beforeCheck, got := planAndCheck(t, webInputs(nil), nil, CheckAll, c); len(beforeCheck) > 0 || len(c.asked()) != 1 || !got.ClusterSchemas {
		t.Errorf("a creation: asked %v during the plan and %v in all, want nothing ahead and one request from Check", beforeCheck, c.asked())
	}

	c = newSchemaChecker(t)
	if _, _, got := planAndCheck(t, changed, recorded, CheckOffline, c); len(c.asked()) > 0 || got.ClusterSchemas {
		t.Errorf("offline checks asked the cluster for schemas: %v", c.asked())
	}
}
