package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// throttlingServer answers the first `throttled` requests of each method and path with API
// Priority and Fairness' 429 and a Retry-After of one second, then as the API server would, and
// records when each request came.
type throttlingServer struct {
	throttled int
	mu        sync.Mutex
	arrivals  map[string][]time.Time
}

func (s *throttlingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Method + " " + r.URL.Path
	s.mu.Lock()
	s.arrivals[key] = append(s.arrivals[key], time.Now())
	seen := len(s.arrivals[key])
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if seen <= s.throttled {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429,` +
			`"message":"too many requests, please try again later"}`))
		return
	}
	switch key {
	case "GET /version":
		_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.2"}`))
	case "POST /api/v1/namespaces/throttled/configmaps":
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"settings","namespace":"throttled"}}`))
	default:
		http.NotFound(w, r)
	}
}

// requestsOf returns when the requests of method and path came.
func (s *throttlingServer) requestsOf(key string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.arrivals[key]...)
}

// expectWaitedAsTold fails unless the request came throttled+1 times, each retry at least the
// Retry-After's second after the answer before it.
func expectWaitedAsTold(t *testing.T, srv *throttlingServer, key string) {
	t.Helper()
	arrivals := srv.requestsOf(key)
	if len(arrivals) != srv.throttled+1 {
		t.Fatalf("%s came %d times, want %d: each 429 retried once, and no more", key, len(arrivals), srv.throttled+1)
	}
	for i := 1; i < len(arrivals); i++ {
		// The answer left after the request arrived, so the gap between arrivals is at least the wait.
		if gap := arrivals[i].Sub(arrivals[i-1]); gap < 950*time.Millisecond {
			t.Errorf("%s: retry %d came %v after the 429 that said Retry-After: 1", key, i, gap)
		}
	}
}

func TestClients_waitRetryAfterOfThrottledRequests(t *testing.T) {
	srv := &throttlingServer{throttled: 2, arrivals: map[string][]time.Time{}}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	conn := NewConnection(Options{Host: hs.URL, InCluster: noInCluster})

	clients, err := conn.Clients(context.Background())
	if err != nil {
		t.Fatalf("the probe gave up on the 429s: %v", err)
	}
	expectWaitedAsTold(t, srv, "GET /version")

	// A write answered 429 was not processed, so it is sent again, after the wait.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "throttled"}}
	if _, err := clients.Kubernetes.CoreV1().ConfigMaps("throttled").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the create gave up on the 429s: %v", err)
	}
	expectWaitedAsTold(t, srv, "POST /api/v1/namespaces/throttled/configmaps")
}

// Discovery is read while the probe waits for /version: the API server sees /api before it
// answers /version.
func TestClients_discoveryIsReadWhileTheProbeWaits(t *testing.T) {
	hs, together := orderServer(t, "/version", "/api", func(w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/version":
			_, _ = w.Write([]byte(versionAnswer))
		case "/api":
			_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":["v1"]}`))
		default:
			return false
		}
		return true
	})
	if _, err := NewConnection(Options{Host: hs.URL, InCluster: noInCluster}).Clients(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !together.Load() {
		t.Error("/version was answered before discovery was asked for: the two are read one after the other")
	}
}
