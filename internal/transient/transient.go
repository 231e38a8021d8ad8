package transient

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Fault is what kept a request from being answered.
type Fault int

const (
	// None: the request was answered; nothing to retry.
	None Fault = iota
	// NotSent: the connection could not be made; the server never saw the request.
	NotSent
	// Interrupted: the connection broke after the request went out; it may or may not have
	// been carried out.
	Interrupted
	// Unavailable: a 502, 503 or 504, from the API server or a proxy in front of it (the
	// GitLab agent's tunnel), with no Retry-After; a write may or may not have been carried out.
	Unavailable
	// Throttled: a 429 with no Retry-After; the API server refused it before doing anything.
	Throttled
)

// Action is what to do about a fault.
type Action int

const (
	// GiveUp returns the failure to the caller.
	GiveUp Action = iota
	// Repeat sends the same request again after a backoff.
	Repeat
	// LookUp first reads the object the request creates: a create that landed is not repeated.
	LookUp
)

// Classify says what fault a round trip's outcome is, and why in words for progress and errors.
// A 502, 503, 504 or 429 is a fault whether or not it carries a Retry-After: the retries here
// honour it (RetryAfter), so that a create answered 503 is looked up rather than repeated
// blindly, as client-go's own retry on a Retry-After would.
func Classify(resp *http.Response, err error) (Fault, string) {
	if err != nil {
		return classifyError(err)
	}
	if resp == nil {
		return None, ""
	}
	switch resp.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return Unavailable, fmt.Sprintf("the server answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	case http.StatusTooManyRequests:
		return Throttled, "the server answered 429 Too Many Requests"
	}
	return None, ""
}

// MaxRetryAfter bounds the wait a Retry-After asks for.
const MaxRetryAfter = 30 * time.Second

// RetryAfter is the wait a response's Retry-After asks for, in whole seconds as the API server
// and client-go write and read it, at most MaxRetryAfter; 0 when it asks none.
func RetryAfter(resp *http.Response) time.Duration {
	if resp == nil {
		return 0
	}
	seconds, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After")))
	if err != nil || seconds <= 0 {
		return 0
	}
	return min(time.Duration(seconds)*time.Second, MaxRetryAfter)
}

// The reasons avoid the wording client-go matches ("connection reset by peer") so that once the
// provider gives up, client-go does not start over.
func classifyError(err error) (Fault, string) {
	var opErr *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return NotSent, "the connection was refused"
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return NotSent, "the connection could not be made (" + opErr.Err.Error() + ")"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return Interrupted, "the connection was reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return Interrupted, "the connection closed before the answer"
	case errors.Is(err, net.ErrClosed):
		return Interrupted, "the connection was closed"
	case http2ConnectionLost(err.Error()):
		return Interrupted, "the HTTP/2 connection was lost"
	case http2StreamBroken(err.Error()):
		return Interrupted, "the HTTP/2 stream was broken"
	case strings.Contains(err.Error(), "http2: client conn could not be established"):
		// A new connection that requests waiting for it share failed its handshake.
		return NotSent, "the HTTP/2 connection could not be made"
	}
	return None, ""
}

// http2ConnectionLost matches golang.org/x/net/http2's errors, which are not exported as
// values; apimachinery's net.IsHTTP2ConnectionLost matches the same wording.
func http2ConnectionLost(msg string) bool {
	return strings.Contains(msg, "http2: client connection lost") ||
		strings.Contains(msg, "http2: server sent GOAWAY") ||
		strings.Contains(msg, "http2: client connection force closed")
}

// http2StreamBroken matches golang.org/x/net/http2's StreamError, which client-go does not
// repeat either: the server or a proxy reset the stream of one request mid-answer.
func http2StreamBroken(msg string) bool {
	return strings.Contains(msg, "stream error: stream ID")
}

// Idempotent says whether sending the request twice leaves the same result as once: reads,
// replacements, deletes (a second finds nothing, 404) and patches that say what the object
// should hold (server-side apply, merge patches). A JSON patch may add twice; a POST creates.
func Idempotent(method, contentType string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return true
	case http.MethodPatch:
		switch strings.TrimSpace(strings.Split(contentType, ";")[0]) {
		case "application/apply-patch+yaml", "application/apply-patch+cbor",
			"application/merge-patch+json", "application/strategic-merge-patch+json":
			return true
		}
	}
	return false
}

// Decide says what to do about a fault of a request.
func Decide(method, contentType string, fault Fault) Action {
	switch fault {
	case None:
		return GiveUp
	case NotSent, Throttled:
		return Repeat
	}
	if Idempotent(method, contentType) {
		return Repeat
	}
	if method == http.MethodPost {
		return LookUp
	}
	return GiveUp
}

// OutcomeUnknown says whether a request that met the fault may have been carried out: then a
// repeated create that answers 409 or a repeated delete that answers 404 is the first one's
// doing, not a failure.
func OutcomeUnknown(f Fault) bool {
	return f == Interrupted || f == Unavailable
}

// Backoff is the wait before attempt n (1 for the first repetition): 250ms doubling to at most
// 4s, spread by jitter in [0,1) over up to a quarter more, so that many clients that failed
// together do not come back together.
func Backoff(n int, jitter float64) time.Duration {
	if n < 1 {
		n = 1
	}
	base := 250 * time.Millisecond * time.Duration(math.Pow(2, float64(min(n-1, 4))))
	return base + time.Duration(float64(base)*0.25*jitter)
}
