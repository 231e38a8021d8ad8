package helmrelease

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/readiness"
)

// Of a failed hook's pod, the error carries at most hookLogLines lines of each container's
// log, and at most hookLogBytes bytes of them.
const (
	hookLogLines = 20
	hookLogBytes = 4096
)

// logTailer reads the end of a container's log; tests replace it.
type logTailer interface {
	TailLog(ctx context.Context, namespace, pod, container string) (string, error)
}

// podLogs reads logs through the API server, which asks the node's kubelet.
type podLogs struct{ client kubernetes.Interface }

func (l podLogs) TailLog(ctx context.Context, namespace, pod, container string) (string, error) {
	lines, limit := int64(hookLogLines), int64(hookLogBytes)
	raw, err := l.client.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{
		Container: container, TailLines: &lines, LimitBytes: &limit,
	}).DoRaw(ctx)
	return string(raw), err
}

// PodLog is the end of the log of one container of a failed hook's pod.
type PodLog struct {
	Pod, Container string
	// Tail is the end of the log; when the log could not be read (Unavailable says why), the
	// message the container left when it terminated, which is its log's end when its policy is
	// FallbackToLogsOnError.
	Tail        string
	Unavailable string
}

func (l PodLog) String() string {
	tail := strings.TrimRight(l.Tail, "\n")
	if l.Unavailable == "" {
		return fmt.Sprintf("log of pod %s, container %s (last %d lines):\n%s", l.Pod, l.Container, hookLogLines, tail)
	}
	if tail == "" {
		return fmt.Sprintf("log of pod %s, container %s unavailable (%s)", l.Pod, l.Container, l.Unavailable)
	}
	return fmt.Sprintf("log of pod %s, container %s unavailable (%s); its termination message:\n%s", l.Pod, l.Container, l.Unavailable, tail)
}

// failedHookLogs returns the ends of the logs of the hooks among refs that failed, read
// again with their namespaces' pods; what cannot be read is left out.
func (w *waiter) failedHookLogs(ctx context.Context, refs []objectRef, failures []readiness.Failure) []PodLog {
	if w.logs == nil {
		// No log reader: nothing to read the hooks again for.
		return nil
	}
	failedKeys := map[string]bool{}
	for _, f := range failures {
		failedKeys[f.Object] = true
	}
	var failedRefs []objectRef
	var namespaces []string
	for _, ref := range refs {
		if failedKeys[ref.key(w.namespace)] {
			failedRefs = append(failedRefs, ref)
			if !slices.Contains(namespaces, ref.Namespace) {
				namespaces = append(namespaces, ref.Namespace)
			}
		}
	}
	objects, err := getAll(ctx, w.reader, failedRefs, pollReadsAtOnce)
	if err != nil {
		w.log("read the failed hooks for their logs: %v", err)
		return nil
	}
	var pods []*unstructured.Unstructured
	for _, ns := range namespaces {
		list, err := w.reader.ListPods(ctx, ns)
		if err != nil {
			w.log("list the pods of the failed hooks: %v", err)
			return nil
		}
		pods = append(pods, list...)
	}
	return w.hookPodLogs(ctx, slices.DeleteFunc(objects, func(o *unstructured.Unstructured) bool { return o == nil }), pods)
}

// hookPodLogs returns the ends of the logs of the failed pods of the failed hooks among
// objects: a hook Pod itself, or the pods of a hook Job (Helm's GetPodLogs reads a Pod
// hook's only). pods are the pods of the hooks' namespaces.
func (w *waiter) hookPodLogs(ctx context.Context, failed []*unstructured.Unstructured, pods []*unstructured.Unstructured) []PodLog {
	if w.logs == nil {
		return nil
	}
	var out []PodLog
	for _, pod := range failedHookPods(failed, pods) {
		for _, c := range containerStatuses(pod) {
			name, _ := c["name"].(string)
			entry := PodLog{Pod: pod.GetName(), Container: name}
			tail, err := w.logs.TailLog(ctx, pod.GetNamespace(), pod.GetName(), name)
			if err != nil || strings.TrimSpace(tail) == "" {
				entry.Unavailable = "the node serves no log"
				if err != nil {
					entry.Unavailable = err.Error()
				}
				tail, _, _ = unstructured.NestedString(c, "state", "terminated", "message")
			}
			entry.Tail = lastLines(tail, hookLogLines, hookLogBytes)
			out = append(out, entry)
		}
	}
	return out
}

// failedHookPods returns the pods of failed that have failed: a Pod itself, the pods a Job
// created (by the job-name label Kubernetes sets on them).
func failedHookPods(failed []*unstructured.Unstructured, pods []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, obj := range failed {
		switch {
		case obj.GetKind() == "Pod" && obj.GroupVersionKind().Group == "":
			out = append(out, obj)
		case obj.GetKind() == "Job" && obj.GroupVersionKind().Group == "batch":
			for _, pod := range pods {
				if pod.GetNamespace() == obj.GetNamespace() && pod.GetLabels()["batch.kubernetes.io/job-name"] == obj.GetName() && podFailed(pod) {
					out = append(out, pod)
				}
			}
		}
	}
	return out
}

// podFailed says whether pod failed, or one of its containers ended with an error.
func podFailed(pod *unstructured.Unstructured) bool {
	if phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase"); phase == "Failed" {
		return true
	}
	for _, c := range containerStatuses(pod) {
		if code, ok, _ := unstructured.NestedInt64(c, "state", "terminated", "exitCode"); ok && code != 0 {
			return true
		}
	}
	return false
}

func containerStatuses(pod *unstructured.Unstructured) []map[string]any {
	list, _, _ := unstructured.NestedSlice(pod.Object, "status", "containerStatuses")
	out := make([]map[string]any, 0, len(list))
	for _, c := range list {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// lastLines returns at most n lines and max bytes of the end of text.
func lastLines(text string, n, max int) string {
	text = strings.TrimRight(text, "\n")
	if len(text) > max {
		text = text[len(text)-max:]
	}
	lines := strings.Split(text, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
