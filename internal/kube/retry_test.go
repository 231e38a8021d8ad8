package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// scriptedTransport answers each request with the next of its answers, and records them.
type scriptedTransport struct {
	answers []func(*http.Request) (*http.Response, error)
	seen    []string
	bodies  []string
	auth    []string
}

func (s *scriptedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	s.seen = append(s.seen, req.Method+" "+req.URL.Path)
	s.auth = append(s.auth, req.Header.Get("Authorization"))
	body := ""
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		body = string(b)
	}
	s.bodies = append(s.bodies, body)
	if len(s.answers) == 0 {
		return nil, errors.New("no answer scripted")
	}
	next := s.answers[0]
	if len(s.answers) > 1 {
		s.answers = s.answers[1:]
	}
	return next(req)
}

func resetConn(*http.Request) (*http.Response, error) {
	return nil, &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}
}

func answer(code int, body string) func(*http.Request) (*http.Response, error) {
	return func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)), Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	}
}

func retryAfter(code int, seconds string) func(*http.Request) (*http.Response, error) {
	return func(req *http.Request) (*http.Response, error) {
		resp, _ := answer(code, "")(req)
		resp.Header.Set("Retry-After", seconds)
		return resp, nil
	}
}

func newRequest(t *testing.T, ctx context.Context, method, path, contentType, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, "https://127.0.0.1:6443"+path+"?fieldManager=gitlabk8s-helm", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer not-a-real-token")
	return req
}

func roundTrip(t *testing.T, script *scriptedTransport, req *http.Request) (*http.Response, []Retry, error) {
	t.Helper()
	var retries []Retry
	rt := &retryTransport{next: script, server: "https://127.0.0.1:6443", retryFor: time.Minute, now: time.Now,
		onRetry: func(r Retry) { retries = append(retries, r) }}
	resp, err := rt.RoundTrip(req)
	return resp, retries, err
}

const (
	configMapsPath = "/api/v1/namespaces/app/configmaps"
	configMapBody  = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"}}`
)

func TestRetryTransport_repeatsAnApplyAcrossResets(t *testing.T) {
	script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){resetConn, resetConn, answer(200, "{}")}}
	req := newRequest(t, context.Background(), "PATCH", configMapsPath+"/settings", "application/apply-patch+yaml", configMapBody)
	resp, retries, err := roundTrip(t, script, req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("got %v, %v; want 200", resp, err)
	}
	if len(script.seen) != 3 || len(retries) != 2 {
		t.Fatalf("sent %v with retries %v; want three sends, two retries", script.seen, retries)
	}
	for i, body := range script.bodies {
		if body != configMapBody {
			t.Fatalf("attempt %d sent body %q; want the apply's body each time", i+1, body)
		}
	}
	if got := retries[0].String(); !strings.Contains(got, "PATCH "+configMapsPath+"/settings") || !strings.Contains(got, "the connection was reset") {
		t.Fatalf("progress %q does not say what is retried and why", got)
	}
}

func TestRetryTransport_neverRepeatsAJSONPatchWhoseOutcomeIsUnknown(t *testing.T) {
	script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){resetConn, answer(200, "{}")}}
	req := newRequest(t, context.Background(), "PATCH", configMapsPath+"/settings", "application/json-patch+json", `[{"op":"add","path":"/data/a","value":"b"}]`)
	if _, _, err := roundTrip(t, script, req); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("err = %v; want the reset itself", err)
	}
	if len(script.seen) != 1 {
		t.Fatalf("sent %v; want it sent once", script.seen)
	}
}

func TestRetryTransport_aCreateThatLandedIsNotRepeated(t *testing.T) {
	script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){resetConn, answer(200, configMapBody)}}
	req := newRequest(t, context.Background(), "POST", configMapsPath, "application/json", configMapBody)
	resp, _, err := roundTrip(t, script, req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("got %v, %v; want the object found, as 201", resp, err)
	}
	want := []string{"POST " + configMapsPath, "GET " + configMapsPath + "/settings"}
	if fmt.Sprint(script.seen) != fmt.Sprint(want) {
		t.Fatalf("sent %v; want %v", script.seen, want)
	}
	if script.auth[1] != "Bearer not-a-real-token" {
		t.Fatal("the look-up was sent without the create's credentials")
	}
}

func TestRetryTransport_aCreateThatDidNotLandIsRepeated(t *testing.T) {
	script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){resetConn, answer(404, "{}"), answer(201, configMapBody)}}
	req := newRequest(t, context.Background(), "POST", configMapsPath, "application/json", configMapBody)
	resp, _, err := roundTrip(t, script, req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("got %v, %v; want 201", resp, err)
	}
	want := []string{"POST " + configMapsPath, "GET " + configMapsPath + "/settings", "POST " + configMapsPath}
	if fmt.Sprint(script.seen) != fmt.Sprint(want) {
		t.Fatalf("sent %v; want %v", script.seen, want)
	}
}

func TestRetryTransport_aCreateThatLandedLateIsFoundAfterItsConflict(t *testing.T) {
	script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){
		answer(504, ""), answer(404, "{}"), answer(409, "{}"), answer(200, configMapBody)}}
	req := newRequest(t, context.Background(), "POST", configMapsPath, "application/json", configMapBody)
	resp, _, err := roundTrip(t, script, req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("got %v, %v; want the object found, as 201", resp, err)
	}
	if len(script.seen) != 4 {
		t.Fatalf("sent %v; want POST, GET, POST, GET", script.seen)
	}
}

// The look-up after a conflict can meet a reset too: the conflict then proves nothing about
// who created the object, and the create is repeated until a look-up answers.
func TestRetryTransport_aConflictWhoseLookUpBreaksIsNotTheAnswer(t *testing.T) {
	script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){
		resetConn, resetConn, answer(409, "{}"), resetConn, answer(409, "{}"), answer(200, configMapBody)}}
	req := newRequest(t, context.Background(), "POST", configMapsPath, "application/json", configMapBody)
	resp, _, err := roundTrip(t, script, req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("got %v, %v; want the object found, as 201", resp, err)
	}
	want := []string{"POST " + configMapsPath, "GET " + configMapsPath + "/settings", "POST " + configMapsPath,
		"GET " + configMapsPath + "/settings", "POST " + configMapsPath, "GET " + configMapsPath + "/settings"}
	if fmt.Sprint(script.seen) != fmt.Sprint(want) {
		t.Fatalf("sent %v; want %v", script.seen, want)
	}
}

// A conflict whose look-up answers 404 is another writer's conflict, not a create that
// landed: it is the answer.
func TestRetryTransport_aConflictOverAnObjectThatIsGoneIsTheAnswer(t *testing.T) {
	script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){
		resetConn, resetConn, answer(409, "{}"), answer(404, "{}")}}
	req := newRequest(t, context.Background(), "POST", configMapsPath, "application/json", configMapBody)
	resp, _, err := roundTrip(t, script, req)
	if err != nil || resp.StatusCode != http.StatusConflict {
		t.Fatalf("got %v, %v; want the conflict", resp, err)
	}
	if len(script.seen) != 4 {
		t.Fatalf("sent %v; want POST, GET, POST, GET", script.seen)
	}
}

func TestRetryTransport_aCreateWithAGeneratedNameIsNotRepeated(t *testing.T) {
	script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){resetConn, answer(201, "{}")}}
	req := newRequest(t, context.Background(), "POST", configMapsPath, "application/json", `{"metadata":{"generateName":"job-"}}`)
	if _, _, err := roundTrip(t, script, req); err == nil {
		t.Fatal("a create of unknown outcome that cannot be looked up succeeded; want its error")
	}
	if len(script.seen) != 1 {
		t.Fatalf("sent %v; want it sent once", script.seen)
	}
}

// A Retry-After is waited for here, not left to client-go, whose retry would repeat a create
// answered 503 without looking it up first.
func TestRetryTransport_honoursRetryAfter(t *testing.T) {
	for _, code := range []int{429, 503} {
		script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){retryAfter(code, "1"), answer(200, "{}")}}
		req := newRequest(t, context.Background(), "GET", configMapsPath, "", "")
		start := time.Now()
		resp, retries, err := roundTrip(t, script, req)
		if err != nil || resp.StatusCode != 200 || len(script.seen) != 2 {
			t.Fatalf("%d: got %v, %v after %v; want 200 on the second attempt", code, resp, err, script.seen)
		}
		if took := time.Since(start); took < time.Second || len(retries) != 1 || retries[0].Wait < time.Second {
			t.Fatalf("%d: repeated after %s (retries %v); want the Retry-After's second", code, took, retries)
		}
	}
}

func TestRetryTransport_aCreateAnswered503WithRetryAfterIsLookedUp(t *testing.T) {
	script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){retryAfter(503, "1"), answer(200, `{"metadata":{"name":"settings"}}`)}}
	req := newRequest(t, context.Background(), "POST", configMapsPath, "application/json", `{"metadata":{"name":"settings"}}`)
	resp, _, err := roundTrip(t, script, req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("got %v, %v; want the object found and answered as created", resp, err)
	}
	if want := []string{"POST " + configMapsPath, "GET " + configMapsPath + "/settings"}; !slices.Equal(script.seen, want) {
		t.Fatalf("sent %v, want %v", script.seen, want)
	}
}

func TestRetryTransport_repeatsGatewayErrorsAndThrottling(t *testing.T) {
	script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){answer(502, ""), answer(429, ""), answer(503, ""), answer(200, "{}")}}
	req := newRequest(t, context.Background(), "DELETE", configMapsPath+"/settings", "", "")
	resp, retries, err := roundTrip(t, script, req)
	if err != nil || resp.StatusCode != 200 || len(retries) != 3 {
		t.Fatalf("got %v, %v with retries %v; want 200 after three", resp, err, retries)
	}
}

func TestRetryTransport_namesTheFaultThatOutlastsTheDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){resetConn}}
	start := time.Now()
	_, _, err := roundTrip(t, script, newRequest(t, ctx, "GET", configMapsPath, "", ""))
	var unanswered *UnansweredError
	if !errors.As(err, &unanswered) {
		t.Fatalf("err = %v; want an UnansweredError", err)
	}
	if took := time.Since(start); took > 1600*time.Millisecond {
		t.Fatalf("gave up after %s; want before the 1.5s deadline", took)
	}
	msg := err.Error()
	if !strings.Contains(msg, "the API server at https://127.0.0.1:6443 did not answer for") || !strings.Contains(msg, "last error: the connection was reset") {
		t.Fatalf("error %q does not name the server and the fault", msg)
	}
	if strings.Contains(msg, "connection reset by peer") {
		t.Fatalf("error %q has the wording client-go would start retrying again on", msg)
	}
}

func TestRetryTransport_firstContactIsNotRetried(t *testing.T) {
	script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){resetConn, answer(200, "{}")}}
	req := newRequest(t, withoutRetries(context.Background()), "GET", "/version", "", "")
	if _, _, err := roundTrip(t, script, req); err == nil || len(script.seen) != 1 {
		t.Fatalf("got %v after %v; want the first failure", err, script.seen)
	}
}

func TestRetryTransport_aDeleteThatLandedIsDone(t *testing.T) {
	script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){resetConn, answer(404, "{}")}}
	req := newRequest(t, context.Background(), "DELETE", "/api/v1/namespaces/app/secrets/sh.helm.release.v1.app.v2", "", "")
	resp, _, err := roundTrip(t, script, req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("got %v, %v; want the delete answered as done", resp, err)
	}
	if len(script.seen) != 2 {
		t.Fatalf("sent %v; want the delete twice", script.seen)
	}
}

func TestRetryTransport_aDeleteOfNothingIsStillNotFound(t *testing.T) {
	script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){answer(429, ""), answer(404, "{}")}}
	req := newRequest(t, context.Background(), "DELETE", configMapsPath+"/settings", "", "")
	resp, _, err := roundTrip(t, script, req)
	if err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("got %v, %v; want 404: a throttled delete never landed", resp, err)
	}
}

// brokenBody is a body that breaks off after its first bytes, as a reset connection does.
type brokenBody struct{ read bool }

func (b *brokenBody) Read(p []byte) (int, error) {
	if b.read {
		return 0, io.ErrUnexpectedEOF
	}
	b.read = true
	return copy(p, `{"items":[`), nil
}

func (b *brokenBody) Close() error { return nil }

func TestRetryTransport_anAnswerThatBreaksOffIsRepeated(t *testing.T) {
	cut := func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: &brokenBody{}, Request: req}, nil
	}
	script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){cut, answer(200, `{"items":[]}`)}}
	resp, retries, err := roundTrip(t, script, newRequest(t, context.Background(), "GET", configMapsPath, "", ""))
	if err != nil || len(retries) != 1 {
		t.Fatalf("got %v with retries %v; want the GET repeated once", err, retries)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || string(body) != `{"items":[]}` {
		t.Fatalf("body %q, %v; want the second answer whole", body, err)
	}
}

func TestRetryTransport_aWatchIsHandedOnAsItComes(t *testing.T) {
	script := &scriptedTransport{answers: []func(*http.Request) (*http.Response, error){func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: &brokenBody{}, Request: req}, nil
	}}}
	req := newRequest(t, context.Background(), "GET", configMapsPath, "", "")
	req.URL.RawQuery = "watch=true"
	resp, retries, err := roundTrip(t, script, req)
	if err != nil || len(retries) != 0 || len(script.seen) != 1 {
		t.Fatalf("got %v with retries %v after %v; want the watch's answer at once", err, retries, script.seen)
	}
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("reading the watch: %v; want its own error", err)
	}
}
