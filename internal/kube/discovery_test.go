package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// Against the API server, reading both documents at once gives what client-go's own reading
// gives: the same groups in the same order, the same resources, nothing failed.
func TestAggregatedDiscovery_answersAsClientGoDoes(t *testing.T) {
	ctx, admin := adminClients(t)
	dc, err := discovery.NewDiscoveryClientForConfig(admin.Config)
	if err != nil {
		t.Fatal(err)
	}
	wantGroups, wantResources, wantFailed, err := dc.GroupsAndMaybeResourcesWithContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	groups, resources, failed, err := aggregatedDiscovery{dc}.GroupsAndMaybeResourcesWithContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups.Groups) < 10 || len(resources) < 10 {
		t.Fatalf("read %d groups and %d group versions' resources: not the API server's discovery", len(groups.Groups), len(resources))
	}
	if !reflect.DeepEqual(groups, wantGroups) {
		t.Errorf("groups differ from client-go's:\n%v\n%v", groups, wantGroups)
	}
	if !reflect.DeepEqual(resources, wantResources) {
		t.Errorf("resources differ from client-go's")
	}
	if len(failed) != len(wantFailed) {
		t.Errorf("failed group versions %v, client-go's %v", failed, wantFailed)
	}
}

// aggregatedAnswer answers an aggregated discovery document with the core group, or none.
func aggregatedAnswer(w http.ResponseWriter, core bool) {
	w.Header().Set("Content-Type", discovery.AcceptV2)
	if core {
		_, _ = w.Write([]byte(`{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[{"metadata":{"name":""},"versions":[{"version":"v1","resources":[{"resource":"configmaps","responseKind":{"group":"","version":"v1","kind":"ConfigMap"},"scope":"Namespaced","verbs":["get"]}]}]}]}`))
		return
	}
	_, _ = w.Write([]byte(`{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[]}`))
}

// discoveryDocuments answers the version and the aggregated discovery documents: the core
// group at /api, no group at /apis.
func discoveryDocuments(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case "/version":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(versionAnswer))
	case "/api", "/apis":
		aggregatedAnswer(w, r.URL.Path == "/api")
	default:
		return false
	}
	return true
}

// The two documents are asked for at once: the server sees /apis before it answers /api.
func TestAggregatedDiscovery_readsBothDocumentsAtOnce(t *testing.T) {
	hs, together := orderServer(t, "/api", "/apis", discoveryDocuments)
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	groups, resources, _, err := aggregatedDiscovery{dc}.GroupsAndMaybeResourcesWithContext(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(groups.Groups) != 1 || len(resources) != 1 {
		t.Errorf("read %v and %v, want the core group and its configmaps", groups, resources)
	}
	if !together.Load() {
		t.Error("/api was answered before /apis was asked for: the documents were read one after the other")
	}
}

// A server that serves only the unaggregated documents is read by client-go's own method.
func TestAggregatedDiscovery_unaggregatedServersAreReadAsClientGoReadsThem(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api":
			_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":["v1"]}`))
		case "/apis":
			_, _ = w.Write([]byte(`{"kind":"APIGroupList","groups":[{"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(hs.Close)
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	groups, _, _, err := aggregatedDiscovery{dc}.GroupsAndMaybeResourcesWithContext(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want, _, _, err := dc.GroupsAndMaybeResourcesWithContext(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(groups, want) || len(groups.Groups) != 2 {
		t.Errorf("groups %v, want client-go's %v", groups, want)
	}
}

// The connection's discovery reads both documents at once.
func TestConnection_discoveryReadsBothDocumentsAtOnce(t *testing.T) {
	hs, together := orderServer(t, "/api", "/apis", discoveryDocuments)
	c, err := NewConnection(Options{Host: hs.URL, InCluster: noInCluster}).Clients(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Discovery.ServerGroups(); err != nil {
		t.Fatal(err)
	}
	if !together.Load() {
		t.Error("/api was answered before /apis was asked for")
	}
}
