package kube

import (
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// askedMapper stands for discovery: it answers from a fixed mapper and records what it was
// asked.
type askedMapper struct {
	meta.ResettableRESTMapper
	asked []string
	reset int
}

func (m *askedMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	m.asked = append(m.asked, gk.String())
	return m.ResettableRESTMapper.RESTMapping(gk, versions...)
}

func (m *askedMapper) Reset() { m.reset++ }

func newAskedMapper() *askedMapper {
	known := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Group: "apps", Version: "v1"}})
	known.Add(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, meta.RESTScopeNamespace)
	known.Add(schema.GroupVersionKind{Group: "apps", Version: "v1beta2", Kind: "Deployment"}, meta.RESTScopeNamespace)
	known.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	return &askedMapper{ResettableRESTMapper: meta.MultiRESTMapper{known}}
}

func TestBuiltinFirstMapper_builtInKindsAreMappedWithoutDiscovery(t *testing.T) {
	discovery := newAskedMapper()
	m := builtinFirstMapper{discovery}
	for _, c := range []struct {
		gvk        schema.GroupVersionKind
		resource   string
		namespaced bool
	}{
		{schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "namespaces", false},
		{schema.GroupVersionKind{Version: "v1", Kind: "Endpoints"}, "endpoints", true},
		{schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"}, "networkpolicies", true},
		{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, "clusterroles", false},
	} {
		mapping, err := m.RESTMapping(c.gvk.GroupKind(), c.gvk.Version)
		if err != nil {
			t.Fatalf("%s: %v", c.gvk, err)
		}
		want := c.gvk.GroupVersion().WithResource(c.resource)
		if mapping.Resource != want || mapping.GroupVersionKind != c.gvk {
			t.Errorf("%s: mapped to %s (%s), want %s", c.gvk, mapping.Resource, mapping.GroupVersionKind, want)
		}
		if namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace; namespaced != c.namespaced {
			t.Errorf("%s: namespaced %t, want %t", c.gvk, namespaced, c.namespaced)
		}
	}
	if len(discovery.asked) != 0 {
		t.Errorf("discovery was asked for %v; built-in kinds at a listed version need none", discovery.asked)
	}
}

func TestBuiltinFirstMapper_everythingElseAsksDiscovery(t *testing.T) {
	discovery := newAskedMapper()
	m := builtinFirstMapper{discovery}
	// A custom resource, a built-in kind at a version not listed, and a kind asked for at any
	// version (Helm and the dry run always name one; others may not).
	if _, err := m.RESTMapping(schema.GroupKind{Group: "example.com", Kind: "Widget"}, "v1"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.RESTMapping(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "v1beta2"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.RESTMapping(schema.GroupKind{Group: "apps", Kind: "Deployment"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.RESTMapping(schema.GroupKind{Group: "example.com", Kind: "Gadget"}, "v1"); !meta.IsNoMatchError(err) {
		t.Errorf("a kind discovery does not know: got %v, want discovery's no-match error", err)
	}
	want := []string{"Widget.example.com", "Deployment.apps", "Deployment.apps", "Gadget.example.com"}
	if len(discovery.asked) != len(want) {
		t.Fatalf("discovery was asked for %v, want %v", discovery.asked, want)
	}
	for i := range want {
		if discovery.asked[i] != want[i] {
			t.Errorf("question %d to discovery: %s, want %s", i, discovery.asked[i], want[i])
		}
	}
	m.Reset()
	if discovery.reset != 1 {
		t.Errorf("Reset reached discovery %d times, want 1 (a CRD installed a moment ago is found by reading it again)", discovery.reset)
	}
}

// Each entry of the table must be what the API server's own discovery says.
func TestBuiltinResources_matchTheAPIServersDiscovery(t *testing.T) {
	_, admin := adminClients(t)
	discovered := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(admin.Kubernetes.Discovery()))
	kinds := make([]schema.GroupVersionKind, 0, len(builtinResources))
	for gvk := range builtinResources {
		kinds = append(kinds, gvk)
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].String() < kinds[j].String() })
	for _, gvk := range kinds {
		want, err := discovered.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Errorf("%s: the API server does not serve it: %v", gvk, err)
			continue
		}
		got, err := builtinFirstMapper{discovered}.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatal(err)
		}
		if got.Resource != want.Resource || got.Scope.Name() != want.Scope.Name() || got.GroupVersionKind != want.GroupVersionKind {
			t.Errorf("%s: the table maps it to %s (%s), discovery to %s (%s)", gvk, got.Resource, got.Scope.Name(), want.Resource, want.Scope.Name())
		}
	}
}

// An environment's objects are read while discovery has not answered: the reads need none.
func TestGetAll_readsBuiltInKindsWithoutDiscovery(t *testing.T) {
	ctx, admin := adminClients(t)
	dc, err := dynamic.NewForConfig(admin.Config)
	if err != nil {
		t.Fatal(err)
	}
	discovery := newAskedMapper()
	c := &Clients{Dynamic: dc, Mapper: builtinFirstMapper{discovery}}
	live, errs := c.GetAll(ctx, []map[string]any{
		{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "default"}},
		{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "default", "namespace": "default"}},
		{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "admin"}},
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
		if live[i] == nil || live[i].GetUID() == "" {
			t.Errorf("object %d: read %v, want the live object", i, live[i])
		}
	}
	if len(discovery.asked) != 0 {
		t.Errorf("discovery was asked for %v", discovery.asked)
	}
}

// The connection's clients map built-in kinds from the table: their reads do not wait for the
// discovery the connection reads in the background.
func TestConnection_mapsBuiltInKindsWithoutDiscovery(t *testing.T) {
	ctx, cluster := localCluster(t)
	c, err := NewConnection(Options{ConfigPath: cluster.Kubeconfig, Context: testcluster.AdminContext, InCluster: noInCluster}).Clients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Mapper.(builtinFirstMapper); !ok {
		t.Fatalf("the connection's mapper is a %T, want the built-in-first mapper", c.Mapper)
	}
	mapping, err := c.Mapper.RESTMapping(schema.GroupKind{Kind: "ServiceAccount"}, "v1")
	if err != nil || mapping.Resource.Resource != "serviceaccounts" {
		t.Fatalf("ServiceAccount mapped to %v, %v", mapping, err)
	}
}

// The table says of each kind what manifest.BuiltinIsNamespaced, the offline answer, says:
// the two lists of built-in kinds never disagree about a kind's scope.
func TestBuiltinResources_agreeWithTheOfflineScopes(t *testing.T) {
	for gvk, r := range builtinResources {
		if offline := manifest.BuiltinIsNamespaced(gvk.GroupVersion().String(), gvk.Kind); offline != r.namespaced {
			t.Errorf("%s: the table says namespaced %t, manifest.BuiltinIsNamespaced %t", gvk, r.namespaced, offline)
		}
	}
}
