package helmrelease

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// tailer serves logs by pod name; a pod without one has no log to serve, as on kwok's node.
type tailer map[string]string

func (l tailer) TailLog(_ context.Context, _, pod, _ string) (string, error) {
	if text, ok := l[pod]; ok {
		return text, nil
	}
	return "", errors.New("the server could not find the requested resource")
}

// testPod is a pod of namespace "apps" in phase, labelled for job, whose container smoke
// terminated with exitCode and message.
func testPod(t *testing.T, name, job, phase string, exitCode int, message string) *unstructured.Unstructured {
	t.Helper()
	pod := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": "apps", "labels": map[string]any{"batch.kubernetes.io/job-name": job}},
		"status": map[string]any{"phase": phase, "containerStatuses": []any{map[string]any{
			"name": "smoke", "state": map[string]any{"terminated": map[string]any{"exitCode": int64(exitCode), "message": message}},
		}}},
	}}
	return pod
}

// A failed hook Job's failed pods, and a failed hook Pod, give the end of their logs; a pod
// whose log cannot be read gives its termination message; a Job's pod that succeeded, or
// another Job's, gives nothing.
func TestHookPodLogs_tailsTheFailedPodsOfFailedHooks(t *testing.T) {
	job := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "smoke", "namespace": "apps"}}}
	hookPod := testPod(t, "check", "", "Failed", 2, "")
	var long strings.Builder
	for i := range 30 {
		long.WriteString("line " + string(rune('a'+i%26)) + "\n")
	}
	pods := []*unstructured.Unstructured{
		testPod(t, "smoke-1", "smoke", "Failed", 1, "panic: boom"),
		testPod(t, "smoke-0", "smoke", "Succeeded", 0, ""),
		testPod(t, "other-0", "other", "Failed", 1, ""),
	}
	w := &waiter{logs: tailer{"check": long.String()}}
	got := w.hookPodLogs(context.Background(), []*unstructured.Unstructured{job, hookPod}, pods)
	if len(got) != 2 {
		t.Fatalf("logs = %+v, want the Job's failed pod and the hook Pod", got)
	}
	if got[0].Pod != "smoke-1" || got[0].Tail != "panic: boom" || got[0].Unavailable == "" {
		t.Errorf("the Job's pod without a log = %+v, want its termination message, the log named unavailable", got[0])
	}
	if lines := strings.Split(got[1].Tail, "\n"); got[1].Pod != "check" || len(lines) != hookLogLines || lines[len(lines)-1] != "line d" {
		t.Errorf("the hook Pod's log = %q, want its last %d lines", got[1].Tail, hookLogLines)
	}
	err := (&FailedError{Logs: got}).Error()
	for _, want := range []string{"log of pod smoke-1, container smoke unavailable", "termination message:\npanic: boom", "log of pod check, container smoke (last 20 lines):\nline k"} {
		if !strings.Contains(err, want) {
			t.Errorf("the error does not say %q:\n%s", want, err)
		}
	}
}
