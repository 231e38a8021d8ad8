package kube

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testing/faultproxy"
)

// protobufBody is obj as the typed clients of built-in kinds send it.
func protobufBody(t *testing.T, obj runtime.Object) string {
	t.Helper()
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestCreatedName_readsJSONAndProtobuf(t *testing.T) {
	secret := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.app.v2", Labels: map[string]string{"owner": "helm"}},
		Data:       map[string][]byte{"release": []byte("H4sIAAAA")}}
	generated := secret.DeepCopy()
	generated.Name, generated.GenerateName = "", "job-"
	for _, tc := range []struct {
		name, contentType, body, want string
	}{
		{"json", "application/json", configMapBody, "settings"},
		{"protobuf", "application/vnd.kubernetes.protobuf", protobufBody(t, secret), "sh.helm.release.v1.app.v2"},
		{"protobuf with parameters", "application/vnd.kubernetes.protobuf; charset=utf-8", protobufBody(t, secret), "sh.helm.release.v1.app.v2"},
		{"protobuf generated name", "application/vnd.kubernetes.protobuf", protobufBody(t, generated), ""},
		{"protobuf without its envelope", "application/vnd.kubernetes.protobuf", "not an envelope", ""},
		{"yaml", "application/yaml", "metadata:\n  name: settings\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest(t, context.Background(), "POST", "/api/v1/namespaces/app/secrets", tc.contentType, tc.body)
			if got := createdName(req); got != tc.want {
				t.Fatalf("createdName = %q, want %q", got, tc.want)
			}
		})
	}
}

// Helm writes its release records with client-go's typed client, which sends protobuf: a
// record whose create met a reset is looked up like any other object.
func TestRetryTransport_aProtobufCreateThatLandedIsNotRepeated(t *testing.T) {
	record := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.app.v2"}}
	script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){resetConn, answer(200, `{"kind":"Secret","apiVersion":"v1","metadata":{"name":"sh.helm.release.v1.app.v2"}}`)}}
	path := "/api/v1/namespaces/app/secrets"
	req := newRequest(t, context.Background(), "POST", path, "application/vnd.kubernetes.protobuf", protobufBody(t, record))
	resp, _, err := roundTrip(t, script, req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("got %v, %v; want the record found, as 201", resp, err)
	}
	want := []string{"POST " + path, "GET " + path + "/sh.helm.release.v1.app.v2"}
	if fmt.Sprint(script.seen) != fmt.Sprint(want) {
		t.Fatalf("sent %v; want %v", script.seen, want)
	}
}

// secretStore answers creates and reads of Secrets over TLS and HTTP/2 as an API server does,
// in whichever encoding the client sends.
type secretStore struct {
	mu      sync.Mutex
	secrets map[string][]byte
	creates atomic.Int32
	lookups atomic.Int32
	// breaks, when set, is asked about each create once its body has come, before the Secret
	// is kept and again after; where it answers true the connection is broken there and no
	// answer is sent, so the create is lost unsent or lands unanswered.
	breaks func(landed bool) bool
}

func (s *secretStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	s.mu.Lock()
	defer s.mu.Unlock()
	status := func(code int, reason string) {
		w.WriteHeader(code)
		_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":%q,"code":%d}`, reason, code)
	}
	if r.Method == http.MethodPost {
		var body bytes.Buffer
		if _, err := body.ReadFrom(r.Body); err != nil {
			return // the connection broke while the body came: nothing was created
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body.Bytes(), &schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, nil)
		secret, ok := obj.(*corev1.Secret)
		if err != nil || !ok {
			status(http.StatusBadRequest, "BadRequest")
			return
		}
		if _, exists := s.secrets[secret.Name]; exists {
			status(http.StatusConflict, "AlreadyExists")
			return
		}
		if s.breaks != nil && s.breaks(false) {
			return
		}
		s.creates.Add(1)
		encoded, _ := runtime.Encode(scheme.Codecs.LegacyCodec(corev1.SchemeGroupVersion), secret)
		s.secrets[secret.Name] = encoded
		if s.breaks != nil && s.breaks(true) {
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(encoded)
		return
	}
	s.lookups.Add(1)
	if stored, ok := s.secrets[r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]]; ok {
		_, _ = w.Write(stored)
		return
	}
	status(http.StatusNotFound, "NotFound")
}

// client-go's typed clientset, as Helm's storage uses it, creating objects through a tunnel
// that resets every connection every 150 ms and in the middle of one create in fifteen: every
// create succeeds, and each lands once.
func TestRetryTransport_typedCreatesRideOutResets(t *testing.T) {
	store := &secretStore{secrets: map[string][]byte{}}
	server := httptest.NewUnstartedServer(store)
	server.EnableHTTP2 = true
	server.StartTLS()
	t.Cleanup(server.Close)
	proxy, err := faultproxy.Start(strings.TrimPrefix(server.URL, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	// A round trip of a few milliseconds keeps requests in flight when the resets come.
	if err := proxy.Delay(3 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// Besides the schedule's resets, which fall wherever they fall, one create in fifteen is
	// broken by the server on purpose: half of those before the Secret is kept, half after.
	posts, broken, landedBroken := 0, 0, 0
	store.mu.Lock()
	store.breaks = func(landed bool) bool {
		if !landed {
			posts++
		}
		if (posts%30 == 10 && !landed) || (posts%30 == 25 && landed) {
			broken++
			if landed {
				landedBroken++
			}
			if err := proxy.ResetAll(); err != nil {
				t.Error(err)
			}
			return true
		}
		return false
	}
	store.mu.Unlock()
	stop := proxy.ResetEvery(context.Background(), 150*time.Millisecond)
	t.Cleanup(func() { _ = stop() })

	cfg := &rest.Config{Host: "https://" + proxy.Addr(), QPS: ClientQPS, Burst: ClientBurst,
		TLSClientConfig: rest.TLSClientConfig{CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})}}
	var retries atomic.Int32
	retrying(cfg, Options{OnRetry: func(Retry) { retries.Add(1) }})
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const creates = 150
	for i := range creates {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sh.helm.release.v1.app%03d.v1", i)},
			Data: map[string][]byte{"release": bytes.Repeat([]byte("x"), 16<<10)}}
		if _, err := kc.CoreV1().Secrets("app").Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %d of %d failed after %d resets: %v (already exists: %v)", i+1, creates, proxy.Resets(), err, apierrors.IsAlreadyExists(err))
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	store.mu.Lock()
	brokenCreates, landedUnanswered := broken, landedBroken
	store.mu.Unlock()
	// A create broken before it landed may be sent again by Go's HTTP/2 transport itself; one
	// that landed unanswered can only be answered by looking it up.
	if landedUnanswered == 0 || int(store.lookups.Load()) < landedUnanswered {
		t.Fatalf("%d creates landed unanswered and %d look-ups: each should have been looked up", landedUnanswered, store.lookups.Load())
	}
	if got := store.creates.Load(); got != creates {
		store.mu.Lock()
		defer store.mu.Unlock()
		var names []string
		for name := range store.secrets {
			names = append(names, name)
		}
		slices.Sort(names)
		t.Fatalf("the server created %d Secrets; want %d, each once: %v", got, creates, names)
	}
	t.Logf("%d creates through %d resets (%d of them in a create), %d retries, %d look-ups", creates, proxy.Resets(), brokenCreates, retries.Load(), store.lookups.Load())
}
