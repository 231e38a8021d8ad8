package helmrelease

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
)

// listingReader serves objects by resource and name and counts the requests it gets.
type listingReader struct {
	objects     map[string]*unstructured.Unstructured // resource/name
	mu          sync.Mutex
	gets, lists int
	selectors   []string // of each LIST, in order: "resource fieldSelector"
}

func (r *listingReader) Get(_ context.Context, ref objectRef) (*unstructured.Unstructured, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gets++
	return r.objects[ref.Resource.Resource+"/"+ref.Name], nil
}

func (r *listingReader) ListPods(context.Context, string) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

func (r *listingReader) List(_ context.Context, resource schema.GroupVersionResource, _, fieldSelector string) (map[string]*unstructured.Unstructured, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lists++
	r.selectors = append(r.selectors, strings.TrimSpace(resource.Resource+" "+fieldSelector))
	out := map[string]*unstructured.Unstructured{}
	for key, obj := range r.objects {
		if key[:len(resource.Resource)+1] == resource.Resource+"/" {
			out[obj.GetName()] = obj
		}
	}
	return out, nil
}

func TestGetAll_listsKindsWithManyObjectsAndGetsTheRest(t *testing.T) {
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	reader := &listingReader{objects: map[string]*unstructured.Unstructured{}}
	var refs []objectRef
	for i := range 5 {
		name := fmt.Sprintf("cm-%d", i)
		if i != 3 { // cm-3 does not exist
			obj := &unstructured.Unstructured{}
			obj.SetName(name)
			reader.objects["configmaps/"+name] = obj
		}
		refs = append(refs, objectRef{Resource: configMaps, Kind: "ConfigMap", Namespace: "review", Name: name})
	}
	web := &unstructured.Unstructured{}
	web.SetName("web")
	reader.objects["deployments/web"] = web
	refs = append(refs, objectRef{Resource: deployments, Kind: "Deployment", Namespace: "review", Name: "web"})

	got, err := getAll(context.Background(), reader, refs, readsAtOnce)
	if err != nil {
		t.Fatal(err)
	}
	if reader.lists != 1 || reader.gets != 1 {
		t.Fatalf("made %d lists and %d gets, want 1 list for the ConfigMaps and 1 get for the Deployment", reader.lists, reader.gets)
	}
	for i, ref := range refs {
		if ref.Name == "cm-3" {
			if got[i] != nil {
				t.Errorf("cm-3 does not exist but was returned")
			}
			continue
		}
		if got[i] == nil || got[i].GetName() != ref.Name {
			t.Errorf("entry %d = %v, want %s", i, got[i], ref.Name)
		}
	}
}

// barrierReader answers a Get only once `wait` Gets are in flight together, and fails the
// objects named in fail.
type barrierReader struct {
	wait              int
	fail              map[string]bool
	mu                sync.Mutex
	inFlight, maxSeen int
	released          bool
	all               chan struct{}
}

func (r *barrierReader) Get(ctx context.Context, ref objectRef) (*unstructured.Unstructured, error) {
	r.mu.Lock()
	r.inFlight++
	r.maxSeen = max(r.maxSeen, r.inFlight)
	if r.inFlight == r.wait && !r.released {
		r.released = true
		close(r.all)
	}
	r.mu.Unlock()
	defer func() { r.mu.Lock(); r.inFlight--; r.mu.Unlock() }()
	select {
	case <-r.all:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if r.fail[ref.Name] {
		return nil, fmt.Errorf("%s refused", ref.Name)
	}
	obj := &unstructured.Unstructured{}
	obj.SetName(ref.Name)
	return obj, nil
}

func (r *barrierReader) ListPods(context.Context, string) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

// A release's objects are read readsAtOnce at a time, never more, each answer in its place,
// and of several failures the first in the objects' order is the one returned.
// A LIST of Secrets leaves Helm's release records out (each a revision's whole chart and
// manifest) when none of the Secrets read may be one; a Secret of their type, or of a type not
// known, is read by a LIST of them all.
func TestGetAll_leavesHelmsRecordsOutOfAListOfSecrets(t *testing.T) {
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, tc := range []struct {
		name      string
		notRecord []bool // of the three Secrets
		want      []string
	}{
		{"none may be a record", []bool{true, true, true}, []string{"configmaps", "secrets type!=helm.sh/release.v1"}},
		{"one may be", []bool{true, false, true}, []string{"configmaps", "secrets"}},
	} {
		reader := &listingReader{objects: map[string]*unstructured.Unstructured{}}
		var refs []objectRef
		for i, notRecord := range tc.notRecord {
			name := fmt.Sprintf("s-%d", i)
			reader.objects["secrets/"+name] = object(t, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: "+name+"\n")
			refs = append(refs, objectRef{Resource: secrets, Kind: "Secret", Namespace: "review", Name: name, NotRecord: notRecord},
				objectRef{Resource: configMaps, Kind: "ConfigMap", Namespace: "review", Name: fmt.Sprintf("cm-%d", i)})
		}
		if _, err := getAll(context.Background(), reader, refs, 1); err != nil {
			t.Fatal(err)
		}
		slices.Sort(reader.selectors)
		if !slices.Equal(reader.selectors, tc.want) {
			t.Errorf("%s: LISTs %q, want %q", tc.name, reader.selectors, tc.want)
		}
	}
}

// Only a Secret whose type is Helm's records', or not known, may be one of them.
func TestNotRecord(t *testing.T) {
	for _, tc := range []struct {
		obj  map[string]any
		want bool
	}{
		{map[string]any{"kind": "ConfigMap", "type": recordType}, true},
		{map[string]any{"kind": "Secret"}, true},
		{map[string]any{"kind": "Secret", "type": "Opaque"}, true},
		{map[string]any{"kind": "Secret", "type": recordType}, false},
		{map[string]any{"kind": "Secret", "type": nil}, false},
		{map[string]any{"kind": "Secret", "type": 1}, false},
	} {
		if got := notRecord(tc.obj); got != tc.want {
			t.Errorf("notRecord(%v) = %v, want %v", tc.obj, got, tc.want)
		}
	}
}

func TestGetAll_readsSeveralAtOnce(t *testing.T) {
	var refs []objectRef
	for i := range 3 * readsAtOnce {
		refs = append(refs, objectRef{Resource: schema.GroupVersionResource{Version: "v1", Resource: fmt.Sprintf("kind%d", i)}, Namespace: "review", Name: fmt.Sprintf("o%02d", i)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reader := &barrierReader{wait: readsAtOnce, all: make(chan struct{})}
	got, err := getAll(ctx, reader, refs, readsAtOnce)
	if err != nil {
		t.Fatalf("%v (%d reads were in flight at most; want %d)", err, reader.maxSeen, readsAtOnce)
	}
	if reader.maxSeen != readsAtOnce {
		t.Errorf("%d reads in flight at most; want %d", reader.maxSeen, readsAtOnce)
	}
	for i, ref := range refs {
		if got[i] == nil || got[i].GetName() != ref.Name {
			t.Errorf("entry %d = %v, want %s", i, got[i], ref.Name)
		}
	}
	reader = &barrierReader{wait: readsAtOnce, all: make(chan struct{}), fail: map[string]bool{"o05": true, "o17": true}}
	if _, err := getAll(ctx, reader, refs, readsAtOnce); err == nil || !strings.Contains(err.Error(), "o05 refused") {
		t.Errorf("err = %v; want o05's", err)
	}
}

// listingBarrierReader is a barrierReader whose LISTs wait at the same barrier as its GETs.
type listingBarrierReader struct{ *barrierReader }

func (r listingBarrierReader) List(ctx context.Context, resource schema.GroupVersionResource, namespace, _ string) (map[string]*unstructured.Unstructured, error) {
	byName := map[string]*unstructured.Unstructured{}
	for i := range minBatch {
		obj, err := r.Get(ctx, objectRef{Resource: resource, Namespace: namespace, Name: fmt.Sprintf("%s-%d", resource.Resource, i)})
		if err != nil {
			return nil, err
		}
		byName[obj.GetName()] = obj
	}
	return byName, nil
}

// The LIST of a kind with many objects and the GET of another kind's one object go out
// together: neither answers until both are in flight.
func TestGetAll_listsAndGetsGoOutTogether(t *testing.T) {
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	var refs []objectRef
	for i := range minBatch {
		refs = append(refs, objectRef{Resource: configMaps, Namespace: "review", Name: fmt.Sprintf("configmaps-%d", i)})
	}
	refs = append(refs, objectRef{Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace: "review", Name: "web"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	reader := listingBarrierReader{&barrierReader{wait: 2, all: make(chan struct{})}}
	got, err := getAll(ctx, reader, refs, readsAtOnce)
	if err != nil {
		t.Fatalf("%v: the LIST and the GET did not go out together", err)
	}
	for i, ref := range refs {
		if got[i] == nil || got[i].GetName() != ref.Name {
			t.Errorf("entry %d = %v, want %s", i, got[i], ref.Name)
		}
	}
}

// A client made from a connection's clients lists through the connection's Lister, not the
// dynamic client (left out here, so that its List would panic).
func TestNew_listsThroughTheConnectionsLister(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/version":
			_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.2"}`))
		case "/api/v1/namespaces/review-1/configmaps":
			_, _ = w.Write([]byte(`{"kind":"ConfigMapList","apiVersion":"v1","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`))
		case "/api":
			_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":["v1"]}`))
		case "/apis":
			_, _ = w.Write([]byte(`{"kind":"APIGroupList","groups":[]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer hs.Close()
	noInCluster := func() (*rest.Config, error) { return nil, rest.ErrNotInCluster }
	clients, err := kube.NewConnection(kube.Options{Host: hs.URL, InCluster: noInCluster}).Clients(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if clients.Lists == nil {
		t.Fatal("the connection's clients have no Lister")
	}
	clients.Dynamic = nil
	lister, ok := New(clients, Options{}).reader.(kindLister)
	if !ok {
		t.Fatal("the client's reader cannot list")
	}
	got, err := lister.List(context.Background(), schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "review-1", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["a"].GetKind() != "ConfigMap" || got["b"].GetAPIVersion() != "v1" {
		t.Errorf("listed %v", got)
	}
}
