package transient

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"
)

func response(status int, retryAfter string) *http.Response {
	h := http.Header{}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return &http.Response{StatusCode: status, Header: h}
}

func TestClassify_faults(t *testing.T) {
	reset := &url.Error{Op: "Patch", URL: "https://x", Err: &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}
	refused := &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, tc := range []struct {
		name string
		resp *http.Response
		err  error
		want Fault
	}{
		{"ok", response(200, ""), nil, None},
		{"not found", response(404, ""), nil, None},
		{"conflict", response(409, ""), nil, None},
		{"internal error", response(500, ""), nil, None},
		{"bad gateway", response(502, ""), nil, Unavailable},
		{"unavailable", response(503, ""), nil, Unavailable},
		{"gateway timeout", response(504, ""), nil, Unavailable},
		{"throttled", response(429, ""), nil, Throttled},
		{"throttled with Retry-After", response(429, "2"), nil, Throttled},
		{"unavailable with Retry-After", response(503, "1"), nil, Unavailable},
		{"unavailable with a date Retry-After", response(503, "Wed, 21 Oct 2015 07:28:00 GMT"), nil, Unavailable},
		{"internal error with Retry-After: client-go's to repeat", response(500, "1"), nil, None},
		{"reset", nil, reset, Interrupted},
		{"unexpected EOF", nil, fmt.Errorf("read body: %w", io.ErrUnexpectedEOF), Interrupted},
		{"EOF", nil, io.EOF, Interrupted},
		{"closed", nil, fmt.Errorf("write: %w", net.ErrClosed), Interrupted},
		{"http2 lost", nil, errors.New("http2: client connection lost"), Interrupted},
		{"http2 lost while the body was written", nil, errors.New("http2: Transport: cannot retry err [http2: client connection force closed via ClientConn.Close] after Request.Body was written; define Request.GetBody to avoid this error"), Interrupted},
		{"http2 connection not established", nil, errors.New("http2: client conn could not be established"), NotSent},
		{"http2 stream reset mid-answer", nil, fmt.Errorf("read the answer: %w", errors.New("stream error: stream ID 7; INTERNAL_ERROR; received from peer")), Interrupted},
		{"body cut mid-answer", nil, fmt.Errorf("read the answer: %w", io.ErrUnexpectedEOF), Interrupted},
		{"refused", nil, refused, NotSent},
		{"other dial failure", nil, &net.OpError{Op: "dial", Err: errors.New("no route to host")}, NotSent},
		{"context cancelled", nil, fmt.Errorf("do: %w", errors.New("context canceled")), None},
		{"certificate", nil, errors.New("x509: certificate signed by unknown authority"), None},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason := Classify(tc.resp, tc.err)
			if got != tc.want {
				t.Fatalf("Classify = %d (%q), want %d", got, reason, tc.want)
			}
			if (got == None) != (reason == "") {
				t.Fatalf("reason %q for fault %d", reason, got)
			}
		})
	}
}

func TestDecide_writesAreRepeatedOnlyWhenSafe(t *testing.T) {
	const apply, jsonPatch, merge = "application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json"
	for _, tc := range []struct {
		method, contentType string
		fault               Fault
		want                Action
	}{
		{"GET", "", Interrupted, Repeat},
		{"GET", "", Unavailable, Repeat},
		{"GET", "", None, GiveUp},
		{"PATCH", apply, Interrupted, Repeat},
		{"PATCH", apply + "; charset=utf-8", Unavailable, Repeat},
		{"PATCH", merge, Interrupted, Repeat},
		{"PATCH", jsonPatch, Interrupted, GiveUp},
		{"PATCH", jsonPatch, NotSent, Repeat},
		{"PATCH", jsonPatch, Throttled, Repeat},
		{"DELETE", "", Interrupted, Repeat},
		{"PUT", "application/json", Unavailable, Repeat},
		{"POST", "application/json", Interrupted, LookUp},
		{"POST", "application/json", Unavailable, LookUp},
		{"POST", "application/json", Throttled, Repeat},
		{"POST", "application/json", NotSent, Repeat},
	} {
		t.Run(fmt.Sprintf("%s %s %d", tc.method, tc.contentType, tc.fault), func(t *testing.T) {
			if got := Decide(tc.method, tc.contentType, tc.fault); got != tc.want {
				t.Fatalf("Decide = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestBackoff_doublesToACapWithBoundedJitter(t *testing.T) {
	for _, tc := range []struct {
		n      int
		jitter float64
		want   time.Duration
	}{
		{0, 0, 250 * time.Millisecond},
		{1, 0, 250 * time.Millisecond},
		{2, 0, 500 * time.Millisecond},
		{3, 0, time.Second},
		{5, 0, 4 * time.Second},
		{50, 0, 4 * time.Second},
		{1, 0.999, 312 * time.Millisecond},
		{50, 0.5, 4500 * time.Millisecond},
	} {
		if got := Backoff(tc.n, tc.jitter).Truncate(time.Millisecond); got != tc.want {
			t.Errorf("Backoff(%d, %v) = %s, want %s", tc.n, tc.jitter, got, tc.want)
		}
	}
}

func TestOutcomeUnknown_onlyWhenTheRequestMayHaveLanded(t *testing.T) {
	for fault, want := range map[Fault]bool{None: false, NotSent: false, Throttled: false, Interrupted: true, Unavailable: true} {
		if got := OutcomeUnknown(fault); got != want {
			t.Errorf("OutcomeUnknown(%d) = %v, want %v", fault, got, want)
		}
	}
}

func TestRetryAfter_wholeSecondsBounded(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   time.Duration
	}{
		{"", 0},
		{"3", 3 * time.Second},
		{" 1 ", time.Second},
		{"0", 0},
		{"-2", 0},
		{"3600", MaxRetryAfter},
		{"Wed, 21 Oct 2015 07:28:00 GMT", 0},
	} {
		if got := RetryAfter(response(http.StatusTooManyRequests, tc.header)); got != tc.want {
			t.Errorf("RetryAfter(%q) = %s, want %s", tc.header, got, tc.want)
		}
	}
	if got := RetryAfter(nil); got != 0 {
		t.Errorf("RetryAfter(nil) = %s, want 0", got)
	}
}
