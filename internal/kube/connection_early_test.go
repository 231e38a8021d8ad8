package kube

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const versionAnswer = `{"major":"1","minor":"37","gitVersion":"v1.37.2"}`

// discoveryAnswers answers discovery with nothing served, as an API server with no groups
// would, so that the test servers' logs hold only what the tests are about.
func discoveryAnswers(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case "/api":
		_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":["v1"]}`))
	case "/apis":
		_, _ = w.Write([]byte(`{"kind":"APIGroupList","groups":[]}`))
	default:
		return false
	}
	return true
}

// orderServer is an API server whose answer to first waits, three seconds at most, until
// second has been asked for; together says whether it had been. Every path is answered by
// answer, which writes nothing for an unknown one (a 404 then).
func orderServer(t *testing.T, first, second string, answer func(w http.ResponseWriter, r *http.Request) bool) (*httptest.Server, *atomic.Bool) {
	t.Helper()
	asked := make(chan struct{})
	var once sync.Once
	together := &atomic.Bool{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case first:
			select {
			case <-asked:
				together.Store(true)
			case <-time.After(3 * time.Second):
			}
		case second:
			once.Do(func() { close(asked) })
		}
		if !answer(w, r) {
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(hs.Close)
	return hs, together
}

// The early clients' requests go out while the probe waits for /version: the API server sees
// the read before it answers /version, and wait then gives what Clients gives.
func TestConnectionEarly_readsWhileTheProbeWaits(t *testing.T) {
	hs, together := orderServer(t, "/version", "/api/v1/namespaces/review-1", func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/version":
			_, _ = w.Write([]byte(versionAnswer))
		case "/api/v1/namespaces/review-1":
			_, _ = w.Write([]byte(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"review-1"}}`))
		default:
			return discoveryAnswers(w, r)
		}
		return true
	})
	conn := NewConnection(Options{Host: hs.URL, InCluster: noInCluster})
	clients, wait, err := conn.Early(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ns, err := clients.Kubernetes.CoreV1().Namespaces().Get(context.Background(), "review-1", metav1.GetOptions{})
	if err != nil || ns.Name != "review-1" {
		t.Fatalf("the early read = %v, %v", ns, err)
	}
	if err := wait(context.Background()); err != nil {
		t.Fatalf("wait = %v", err)
	}
	if !together.Load() {
		t.Error("/version was answered before the read was sent: the read waited for the probe")
	}
	if clients.ServerVersion != "v1.37.2" {
		t.Errorf("after wait, ServerVersion = %q", clients.ServerVersion)
	}
	again, err := conn.Clients(context.Background())
	if err != nil || again != clients {
		t.Errorf("Clients after Early = %p, %v; want the same clients %p", again, err, clients)
	}
}

// When the probe finds no server, wait says so with an UnreachableError, and the next call
// connects again: a cluster that comes up later is found.
func TestConnectionEarly_aFailedProbeIsReportedAndNotKept(t *testing.T) {
	var versions atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if discoveryAnswers(w, r) {
			return
		}
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		if versions.Add(1) == 1 {
			// Not a status the retries repeat: the probe fails at once.
			http.Error(w, "not yet", http.StatusForbidden)
			return
		}
		_, _ = w.Write([]byte(versionAnswer))
	}))
	t.Cleanup(hs.Close)
	conn := NewConnection(Options{Host: hs.URL, InCluster: noInCluster})
	_, wait, err := conn.Early(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var unreachable *UnreachableError
	if err := wait(context.Background()); !errors.As(err, &unreachable) {
		t.Fatalf("wait = %v, want an UnreachableError", err)
	}
	clients, err := conn.Clients(context.Background())
	if err != nil {
		t.Fatalf("the next call did not connect again: %v", err)
	}
	if clients.ServerVersion != "v1.37.2" || versions.Load() != 2 {
		t.Errorf("ServerVersion %q after %d probes, want v1.37.2 after 2", clients.ServerVersion, versions.Load())
	}
}
