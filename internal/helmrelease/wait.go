package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/readiness"
)

// objectRef names one object of a release in the cluster.
type objectRef struct {
	Resource   schema.GroupVersionResource
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	// NotRecord says the object is known not to be a Secret of the type of Helm's release
	// records, so that a LIST which leaves Helm's records out still holds it (getAll).
	NotRecord bool
}

// key is the object's key in `manifests`, relative to the release namespace.
func (r objectRef) key(releaseNamespace string) string {
	return manifest.Key(manifest.Object{
		"apiVersion": r.APIVersion,
		"kind":       r.Kind,
		"metadata":   map[string]any{"name": r.Name, "namespace": r.Namespace},
	}, releaseNamespace)
}

// objectGetter reads one object; a reader that is also a kindLister reads many with a LIST.
type objectGetter interface {
	// Get returns the object, or nil without an error when it does not exist.
	Get(ctx context.Context, ref objectRef) (*unstructured.Unstructured, error)
}

// liveReader reads objects and pods from the cluster; tests replace it.
type liveReader interface {
	objectGetter
	// ListPods returns the pods of a namespace.
	ListPods(ctx context.Context, namespace string) ([]*unstructured.Unstructured, error)
	// ListEvents returns the core/v1 Events of a namespace.
	ListEvents(ctx context.Context, namespace string) ([]*unstructured.Unstructured, error)
}

// dynamicReader reads objects with the dynamic client and lists them with the connection's
// Lister (one pass over a LIST's answer, where the dynamic client's List makes about ten).
type dynamicReader struct {
	client dynamic.Interface
	lists  *kube.Lister
}

func (d dynamicReader) Get(ctx context.Context, ref objectRef) (*unstructured.Unstructured, error) {
	obj, err := d.client.Resource(ref.Resource).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

var (
	podsResource   = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	eventsResource = schema.GroupVersionResource{Version: "v1", Resource: "events"}
)

func (d dynamicReader) ListPods(ctx context.Context, namespace string) ([]*unstructured.Unstructured, error) {
	return d.listAll(ctx, podsResource, namespace)
}

func (d dynamicReader) ListEvents(ctx context.Context, namespace string) ([]*unstructured.Unstructured, error) {
	return d.listAll(ctx, eventsResource, namespace)
}

func (d dynamicReader) listAll(ctx context.Context, resource schema.GroupVersionResource, namespace string) ([]*unstructured.Unstructured, error) {
	items, err := d.lists.List(ctx, resource, namespace, "")
	if err != nil {
		return nil, err
	}
	objs := make([]*unstructured.Unstructured, len(items))
	for i := range items {
		objs[i] = &items[i]
	}
	return objs, nil
}

// workloadKinds own pods; only their namespaces need a pod list.
var workloadKinds = []string{"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod"}

// explainedKinds are the kinds whose events (their own, or their pods' and claims') can say
// why they are not ready; only their namespaces need an event list.
var explainedKinds = append([]string{"PersistentVolumeClaim", "Service"}, workloadKinds...)

// ProgressFunc receives a one-line summary of a wait and its per-object detail. It is called
// when the summary changes and at least every progressHeartbeat while nothing changes.
type ProgressFunc func(summary string, objects []readiness.Progress)

const (
	defaultPollInterval = time.Second
	progressHeartbeat   = 10 * time.Second
)

// waiter polls the objects of a release until they are ready or gone.
type waiter struct {
	reader liveReader
	// deletions reads for the deletion wait; reader when nil.
	deletions objectGetter
	namespace string // the release namespace; object keys are relative to it
	interval  time.Duration
	progress  ProgressFunc
	logf      func(format string, args ...any)
	// since is when the operation started: events seen before it are an earlier rollout's.
	// The wait's own start when zero.
	since time.Time
	// blockedTimeout, when positive, fails an object that has been blocked that long for a
	// reason that might still clear by itself (readiness.Result.Blocked).
	blockedTimeout time.Duration
	// logs reads the end of a failed hook's pod's log; none are read when nil.
	logs logTailer
}

// FailedError says that objects failed while the release was waited for: a crash-looping or
// unpullable pod, a failed Job, a Deployment past its progress deadline.
type FailedError struct {
	Failures []readiness.Failure
	// Logs are the ends of the logs of failed hooks' pods.
	Logs []PodLog
}

func (e *FailedError) Error() string {
	parts := make([]string, 0, len(e.Failures))
	for _, f := range e.Failures {
		part := f.Object + ": " + f.Reason
		if f.Message != "" {
			part += ": " + f.Message
		}
		parts = append(parts, part)
	}
	msg := strings.Join(parts, "; ")
	for _, l := range e.Logs {
		msg += "\n" + l.String()
	}
	return msg
}

// TimeoutError says that the wait ran out of time; NotReady tells what was still pending, and
// Blocked which of those waited for a reason that might have cleared by itself (a pod no node
// could take), which blockedTimeout would have failed sooner.
type TimeoutError struct {
	Timeout  time.Duration
	NotReady []readiness.Progress
	Blocked  []readiness.Failure
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("not ready after %s: %s", e.Timeout, describeProgress(e.NotReady))
}

// BlockedError says that objects stayed blocked longer than the wait allows for a reason that
// might still have cleared by itself: a pod no node could take, a volume the provisioner kept
// failing to create, a load balancer without an address, a failing readiness probe.
type BlockedError struct {
	After   time.Duration
	Blocked []readiness.Failure
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("blocked for %s: %s", e.After, (&FailedError{Failures: e.Blocked}).Error())
}

var errWaitTimeout = errors.New("wait timed out")

// waitReady polls refs until every object is ready, one fails, the timeout passes or ctx is
// cancelled.
func (w *waiter) waitReady(ctx context.Context, refs []objectRef, timeout time.Duration) error {
	return w.wait(ctx, refs, timeout, false)
}

// waitHooks is waitReady for hooks, which exist when the wait starts: a hook that is gone has
// finished, as Helm's hook watch takes a deletion. A Job with `ttlSecondsAfterFinished: 0`
// (ingress-nginx's certificate Jobs) is deleted the moment it completes, often between polls.
// A hook Pod is done when it has succeeded, not when it is ready.
func (w *waiter) waitHooks(ctx context.Context, refs []objectRef, timeout time.Duration) error {
	return w.wait(ctx, refs, timeout, true)
}

func (w *waiter) wait(ctx context.Context, refs []objectRef, timeout time.Duration, goneIsDone bool) error {
	if len(refs) == 0 {
		return nil
	}
	waitCtx, cancel := context.WithTimeoutCause(ctx, timeout, errWaitTimeout)
	defer cancel()
	ticker := time.NewTicker(w.pollInterval())
	defer ticker.Stop()
	var reporter progressReporter
	var last []readiness.Progress
	var lastBlocked []readiness.Failure
	blocked := blockedClock{since: map[string]time.Time{}}
	since := w.since
	if since.IsZero() {
		since = time.Now()
	}
	// Event times have whole seconds, and a cluster's clock may be a little behind ours.
	since = since.Add(-time.Second).Truncate(time.Second)
	for {
		result, err := w.evaluate(waitCtx, refs, since, goneIsDone)
		switch {
		case err != nil && waitCtx.Err() == nil:
			// The API server may blip during a rollout; the timeout bounds the retries.
			w.log("readiness check failed, retrying: %v", err)
		case err == nil:
			last, lastBlocked = result.Progress, result.Blocked
			reporter.report(w.progress, result.Progress)
			if len(result.Failures) > 0 && goneIsDone {
				return &FailedError{Failures: result.Failures, Logs: w.failedHookLogs(waitCtx, refs, result.Failures)}
			}
			if len(result.Failures) > 0 {
				return &FailedError{Failures: result.Failures}
			}
			if result.Ready {
				return nil
			}
			if over := blocked.over(result.Blocked, w.blockedTimeout, time.Now()); len(over) > 0 {
				return &BlockedError{After: w.blockedTimeout, Blocked: over}
			}
		}
		select {
		case <-waitCtx.Done():
			if errors.Is(context.Cause(waitCtx), errWaitTimeout) {
				return &TimeoutError{Timeout: timeout, NotReady: notReady(last), Blocked: lastBlocked}
			}
			return fmt.Errorf("wait cancelled (%s): %w", describeProgress(notReady(last)), context.Cause(ctx))
		case <-ticker.C:
		}
	}
}

// evaluate reads every object and the pods of the namespaces holding workloads, and rates them.
// An object that does not exist is not ready, unless goneIsDone.
func (w *waiter) evaluate(ctx context.Context, refs []objectRef, since time.Time, goneIsDone bool) (readiness.Result, error) {
	objects := make([]*unstructured.Unstructured, 0, len(refs))
	var missing []readiness.Progress
	var podNamespaces, eventNamespaces []string
	live, err := getAll(ctx, w.reader, refs, pollReadsAtOnce)
	if err != nil {
		return readiness.Result{}, err
	}
	for i, ref := range refs {
		obj := live[i]
		if obj == nil && goneIsDone {
			w.log("%s is gone: it finished and was deleted, or someone deleted it", ref.key(w.namespace))
			continue
		}
		if obj == nil {
			missing = append(missing, readiness.Progress{Object: ref.key(w.namespace), Status: "NotFound"})
			continue
		}
		objects = append(objects, obj)
		if slices.Contains(workloadKinds, ref.Kind) && !slices.Contains(podNamespaces, ref.Namespace) {
			podNamespaces = append(podNamespaces, ref.Namespace)
		}
		if slices.Contains(explainedKinds, ref.Kind) && !slices.Contains(eventNamespaces, ref.Namespace) {
			eventNamespaces = append(eventNamespaces, ref.Namespace)
		}
	}
	var pods []*unstructured.Unstructured
	for _, ns := range podNamespaces {
		list, err := w.reader.ListPods(ctx, ns)
		if err != nil {
			return readiness.Result{}, fmt.Errorf("list pods in namespace %s: %w", ns, err)
		}
		pods = append(pods, list...)
	}
	// One LIST of each namespace's events per poll, whatever the number of objects.
	var events []*unstructured.Unstructured
	for _, ns := range eventNamespaces {
		list, err := w.reader.ListEvents(ctx, ns)
		if err != nil {
			return readiness.Result{}, fmt.Errorf("list events in namespace %s: %w", ns, err)
		}
		events = append(events, list...)
	}
	result := readiness.Evaluate(readiness.Input{Objects: objects, Pods: pods, Events: events, Since: since})
	if goneIsDone {
		w.awaitHookPods(&result, objects)
	}
	if len(missing) > 0 {
		result.Ready = false
		result.Progress = append(result.Progress, missing...)
	}
	return result, nil
}

// awaitHookPods makes result wait for the Pods of objects, hooks, as Helm does: until they
// have succeeded, not only until they are ready; a Pod that failed fails the hook.
func (w *waiter) awaitHookPods(result *readiness.Result, objects []*unstructured.Unstructured) {
	for _, obj := range objects {
		if obj.GetKind() != "Pod" || obj.GroupVersionKind().Group != "" {
			continue
		}
		key := manifest.Key(obj.Object, obj.GetNamespace())
		phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		switch phase {
		case "Succeeded":
			continue
		case "Failed":
			result.Ready = false
			result.Failures = append(result.Failures, hookPodFailure(obj, key))
			continue
		case "":
			phase = "Pending"
		}
		result.Ready = false
		if !slices.ContainsFunc(result.Progress, func(p readiness.Progress) bool { return p.Object == key }) {
			result.Progress = append(result.Progress, readiness.Progress{Object: key, Status: phase})
		}
	}
}

// hookPodFailure describes a hook Pod that failed, with the reason and message of its status.
func hookPodFailure(pod *unstructured.Unstructured, key string) readiness.Failure {
	reason, _, _ := unstructured.NestedString(pod.Object, "status", "reason")
	message, _, _ := unstructured.NestedString(pod.Object, "status", "message")
	if reason == "" {
		reason = "Failed"
	}
	text := "pod " + pod.GetName() + " failed"
	if message != "" {
		text += ": " + message
	}
	return readiness.Failure{Object: key, Reason: reason, Message: text}
}

// waitDeleted polls refs until none of them exists any more.
func (w *waiter) waitDeleted(ctx context.Context, refs []objectRef, timeout time.Duration) error {
	if len(refs) == 0 {
		return nil
	}
	waitCtx, cancel := context.WithTimeoutCause(ctx, timeout, errWaitTimeout)
	defer cancel()
	ticker := time.NewTicker(w.pollInterval())
	defer ticker.Stop()
	var reporter progressReporter
	var remaining []readiness.Progress
	for {
		var err error
		remaining, err = w.remaining(waitCtx, refs)
		switch {
		case err != nil && waitCtx.Err() == nil:
			w.log("deletion check failed, retrying: %v", err)
		case err == nil:
			if len(remaining) == 0 {
				return nil
			}
			reporter.report(w.progress, remaining)
		}
		select {
		case <-waitCtx.Done():
			if errors.Is(context.Cause(waitCtx), errWaitTimeout) {
				return &TimeoutError{Timeout: timeout, NotReady: remaining}
			}
			return fmt.Errorf("wait for deletion cancelled (%s): %w", describeProgress(remaining), context.Cause(ctx))
		case <-ticker.C:
		}
	}
}

// remaining returns the objects of refs that still exist, saying what holds them.
func (w *waiter) remaining(ctx context.Context, refs []objectRef) ([]readiness.Progress, error) {
	var left []readiness.Progress
	live, err := getAll(ctx, w.deletionReader(), refs, pollReadsAtOnce)
	if err != nil {
		return nil, err
	}
	for i, ref := range refs {
		obj := live[i]
		if obj == nil {
			continue
		}
		status := "Terminating"
		if obj.GetDeletionTimestamp() == nil {
			status = "NotDeleted"
		}
		if finalizers := obj.GetFinalizers(); len(finalizers) > 0 {
			status += ", finalizers " + strings.Join(finalizers, ", ")
		}
		left = append(left, readiness.Progress{Object: ref.key(w.namespace), Status: status})
	}
	return left, nil
}

// deletionReader reads what deletions leave: metadata only when the client set has a
// metadata client.
func (w *waiter) deletionReader() objectGetter {
	if w.deletions != nil {
		return w.deletions
	}
	return w.reader
}

func (w *waiter) pollInterval() time.Duration {
	if w.interval > 0 {
		return w.interval
	}
	return defaultPollInterval
}

func (w *waiter) log(format string, args ...any) {
	if w.logf != nil {
		w.logf(format, args...)
	}
}

// progressReporter calls a ProgressFunc when the summary changes, and at least every
// progressHeartbeat, so a CI log shows a wait is alive without repeating every second.
type progressReporter struct {
	lastSummary string
	lastAt      time.Time
}

func (r *progressReporter) report(fn ProgressFunc, progress []readiness.Progress) {
	if fn == nil {
		return
	}
	summary := describeProgress(progress)
	if summary == r.lastSummary && time.Since(r.lastAt) < progressHeartbeat {
		return
	}
	r.lastSummary, r.lastAt = summary, time.Now()
	fn(summary, progress)
}

// blockedClock remembers since when each object has been blocked without a break.
type blockedClock struct{ since map[string]time.Time }

// over records blocked at now and returns those blocked for limit or longer; none when limit
// is not positive.
func (c blockedClock) over(blocked []readiness.Failure, limit time.Duration, now time.Time) []readiness.Failure {
	current := map[string]bool{}
	var over []readiness.Failure
	for _, b := range blocked {
		current[b.Object] = true
		first, ok := c.since[b.Object]
		if !ok {
			c.since[b.Object] = now
			first = now
		}
		if limit > 0 && now.Sub(first) >= limit {
			over = append(over, b)
		}
	}
	for object := range c.since {
		if !current[object] {
			delete(c.since, object)
		}
	}
	return over
}

// describeProgress writes progress as "Deployment.apps/web ready 1/2 (InProgress), ...", with
// why an object waits where that is known: "(InProgress; Unschedulable: pod web-x: ...)".
func describeProgress(progress []readiness.Progress) string {
	if len(progress) == 0 {
		return "no objects pending"
	}
	parts := make([]string, 0, len(progress))
	for _, p := range progress {
		part := p.Object
		if p.Desired > 0 {
			part += fmt.Sprintf(" ready %d/%d", p.Ready, p.Desired)
		}
		switch {
		case p.Status != "" && p.Reason != "":
			part += " (" + p.Status + "; " + p.Reason + ": " + p.Message + ")"
		case p.Status != "":
			part += " (" + p.Status + ")"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// notReady keeps the entries of progress that are not yet current.
func notReady(progress []readiness.Progress) []readiness.Progress {
	var out []readiness.Progress
	for _, p := range progress {
		if p.Status != "Current" || p.Ready < p.Desired {
			out = append(out, p)
		}
	}
	return out
}
