package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/transient"
)

// DefaultRetryFor bounds how long one request is retried when its context has no deadline
// sooner: long enough for an API server to restart or the agent's tunnel to reconnect.
const DefaultRetryFor = 2 * time.Minute

// Retry is one repetition of a request, for progress.
type Retry struct {
	Method, Path string
	Reason       string
	Attempt      int
	Wait         time.Duration
}

func (r Retry) String() string {
	return fmt.Sprintf("retrying %s %s in %s (attempt %d): %s", r.Method, r.Path, r.Wait.Round(time.Millisecond), r.Attempt+1, r.Reason)
}

// UnansweredError is a request retried until its context or DefaultRetryFor ran out.
type UnansweredError struct {
	Server   string
	For      time.Duration
	Attempts int
	Last     string
}

func (e *UnansweredError) Error() string {
	return fmt.Sprintf("the API server at %s did not answer for %s (%d attempts); last error: %s", e.Server, e.For.Round(time.Second), e.Attempts, e.Last)
}

// retryTransport repeats what internal/transient says is safe to repeat, within the request's
// context and retryFor. It sits under client-go's authentication wrappers, so a repeated
// request carries the same credentials.
type retryTransport struct {
	next     http.RoundTripper
	server   string
	retryFor time.Duration
	onRetry  func(Retry)
	now      func() time.Time
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return t.next.RoundTrip(req) // a body we cannot send twice
	}
	ctx := req.Context()
	if ctx.Value(noRetries{}) != nil {
		return t.next.RoundTrip(req)
	}
	start := t.now()
	contentType := req.Header.Get("Content-Type")
	unknownOutcome := false
	for attempt := 1; ; attempt++ {
		resp, err := t.next.RoundTrip(t.rewound(req, attempt))
		if err == nil && !streamed(req) {
			// An answer whose body breaks off is as lost as one that never came; client-go
			// would hand the reader's error to the caller unrepeated.
			if err = buffer(resp); err != nil {
				resp = nil
			}
		}
		fault, reason := transient.Classify(resp, err)
		action := transient.Decide(req.Method, contentType, fault)
		if unknownOutcome && err == nil {
			settled, untold := t.settledByEarlierAttempt(req, resp)
			if settled != nil {
				drain(resp)
				return settled, nil
			}
			if untold != "" {
				// The conflict may be this request's own earlier create: it is the answer only
				// once a look-up says the object is not there.
				action, reason = transient.Repeat, untold
			}
		}
		if action == transient.GiveUp {
			return resp, err
		}
		unknownOutcome = unknownOutcome || transient.OutcomeUnknown(fault)
		if action == transient.LookUp {
			// A create is repeated only if it names its object: a repeat that finds it
			// created meanwhile answers 409 and is looked up again.
			name := createdName(req)
			found, _ := t.lookUp(req, name)
			if found == nil && name == "" {
				return resp, err
			}
			if found != nil {
				drain(resp)
				return found, nil
			}
		}
		wait := max(transient.Backoff(attempt, rand.Float64()), transient.RetryAfter(resp))
		if giveUp := t.outOfTime(ctx, start, wait); giveUp {
			drain(resp)
			return nil, &UnansweredError{Server: t.server, For: t.now().Sub(start), Attempts: attempt, Last: reason}
		}
		drain(resp)
		if t.onRetry != nil {
			t.onRetry(Retry{Method: req.Method, Path: req.URL.Path, Reason: reason, Attempt: attempt, Wait: wait})
		}
		select {
		case <-ctx.Done():
			return nil, &UnansweredError{Server: t.server, For: t.now().Sub(start), Attempts: attempt, Last: reason}
		case <-time.After(wait):
		}
	}
}

// settledByEarlierAttempt answers for a request repeated after an attempt that may have landed:
// a create that now conflicts is looked up and answered as created when it exists, and a delete
// that now finds nothing is answered as done. It returns nil for any other answer, with why in
// words when the look-up itself met a fault and so could not tell.
func (t *retryTransport) settledByEarlierAttempt(req *http.Request, resp *http.Response) (*http.Response, string) {
	switch {
	case req.Method == http.MethodPost && resp.StatusCode == http.StatusConflict:
		found, untold := t.lookUp(req, createdName(req))
		if untold != "" {
			untold = "the look-up after a conflict failed: " + untold
		}
		return found, untold
	case req.Method == http.MethodDelete && resp.StatusCode == http.StatusNotFound:
		body := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"}`
		return &http.Response{
			StatusCode: http.StatusOK, Status: "200 OK", Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
			Header: http.Header{"Content-Type": []string{"application/json"}},
			Body:   io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: req,
		}, ""
	}
	return nil, ""
}

func (t *retryTransport) outOfTime(ctx context.Context, start time.Time, wait time.Duration) bool {
	next := t.now().Add(wait)
	if deadline, ok := ctx.Deadline(); ok && next.After(deadline) {
		return true
	}
	return ctx.Err() != nil || next.Sub(start) > t.retryFor
}

// rewound is req with a fresh body for every attempt after the first.
func (t *retryTransport) rewound(req *http.Request, attempt int) *http.Request {
	if attempt == 1 || req.GetBody == nil {
		return req
	}
	body, err := req.GetBody()
	if err != nil {
		return req
	}
	again := req.Clone(req.Context())
	again.Body = body
	return again
}

// createdName is the name a create's body gives its object; "" when it has none
// (generateName) or the body cannot be read. Bodies come as JSON, or as protobuf from the typed
// clients of built-in kinds (Helm's release records among them).
func createdName(req *http.Request) string {
	if req.GetBody == nil {
		return ""
	}
	mediaType, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if mediaType != runtime.ContentTypeJSON && mediaType != runtime.ContentTypeProtobuf {
		return ""
	}
	body, err := req.GetBody()
	if err != nil {
		return ""
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	if err != nil {
		return ""
	}
	if mediaType == runtime.ContentTypeProtobuf {
		return protobufName(data)
	}
	var object struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if json.Unmarshal(data, &object) != nil {
		return ""
	}
	return object.Metadata.Name
}

// protobufName is the name in a protobuf-encoded object: the API's envelope (a magic prefix,
// then a runtime.Unknown) around an object whose first field is its ObjectMeta, as in every
// built-in kind; PartialObjectMetadata reads that field and skips the rest.
func protobufName(data []byte) string {
	envelope, ok := bytes.CutPrefix(data, []byte{'k', '8', 's', 0})
	if !ok {
		return ""
	}
	var unknown runtime.Unknown
	if unknown.Unmarshal(envelope) != nil {
		return ""
	}
	var object metav1.PartialObjectMetadata
	if object.Unmarshal(unknown.Raw) != nil {
		return ""
	}
	return object.Name
}

// lookUp reads the object named name that req creates, with the create's credentials; it
// returns the object as the create's answer (201) when it exists, and nil when it does not, the
// create names none (generateName) or it cannot be told. When the read itself met a transient
// fault (a reset, a 503), it also says which, in words: absence was not shown.
func (t *retryTransport) lookUp(req *http.Request, name string) (*http.Response, string) {
	if name == "" {
		return nil, ""
	}
	get := req.Clone(req.Context())
	get.Method = http.MethodGet
	get.Body, get.GetBody, get.ContentLength = nil, nil, 0
	get.Header.Del("Content-Type")
	get.Header.Set("Accept", "application/json")
	get.URL.Path = strings.TrimSuffix(req.URL.Path, "/") + "/" + name
	get.URL.RawPath = ""
	get.URL.RawQuery = ""
	resp, err := t.next.RoundTrip(get)
	if err == nil {
		if err = buffer(resp); err != nil {
			resp = nil
		}
	}
	if fault, reason := transient.Classify(resp, err); fault != transient.None {
		drain(resp)
		return nil, reason
	}
	if err != nil {
		return nil, ""
	}
	if resp.StatusCode != http.StatusOK {
		drain(resp)
		return nil, ""
	}
	resp.StatusCode, resp.Status = http.StatusCreated, "201 Created"
	resp.Request = req
	return resp, ""
}

type noRetries struct{}

// withoutRetries marks requests made with ctx to be sent once: the first contact, so that a
// wrong address or a cluster that is not there fails at once and says so.
func withoutRetries(ctx context.Context) context.Context {
	return context.WithValue(ctx, noRetries{}, true)
}

// retrying wraps every client of cfg, Helm's included (it copies cfg), in the retries.
func retrying(cfg *rest.Config, opts Options) {
	retryFor := opts.RetryFor
	if retryFor <= 0 {
		retryFor = DefaultRetryFor
	}
	server := cfg.Host
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return &retryTransport{next: next, server: server, retryFor: retryFor, onRetry: opts.OnRetry, now: time.Now}
	})
}

// streamed says whether the answer to req streams for as long as the client reads it (a
// watch, a followed log, an upgraded connection): it is handed on as it comes.
func streamed(req *http.Request) bool {
	query := req.URL.Query()
	return query.Get("watch") == "true" || query.Get("watch") == "1" || query.Get("follow") == "true" ||
		strings.Contains(req.URL.Path, "/watch/") || req.Header.Get("Upgrade") != ""
}

// buffer reads resp's body into memory, so that a connection that breaks while the answer is
// read is a fault of the round trip.
func buffer(resp *http.Response) error {
	if resp == nil || resp.Body == nil || resp.Body == http.NoBody {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return fmt.Errorf("read the answer: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return nil
}

func drain(resp *http.Response) {
	if resp == nil || resp.Body == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
}
