package helmrelease

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/readiness"
)

const progressingDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: review, generation: 1}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}
status:
  observedGeneration: 1
  replicas: 2
  updatedReplicas: 2
  readyReplicas: 1
  availableReplicas: 1
  conditions:
  - {type: Progressing, status: "True", reason: ReplicaSetUpdated}
  - {type: Available, status: "False"}
`

const readyDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: review, generation: 1}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}
status:
  observedGeneration: 1
  replicas: 2
  updatedReplicas: 2
  readyReplicas: 2
  availableReplicas: 2
  conditions:
  - {type: Progressing, status: "True", reason: NewReplicaSetAvailable}
  - {type: Available, status: "True"}
`

var deploymentRef = objectRef{
	Resource:   schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
	APIVersion: "apps/v1", Kind: "Deployment", Namespace: "review", Name: "web",
}

func TestWaitReady_becomesReadyAndReportsProgress(t *testing.T) {
	reader := &fakeReader{objects: map[string]*unstructured.Unstructured{"web": object(t, progressingDeployment)}}
	polls := 0
	reader.step = func(f *fakeReader) {
		polls++
		if polls == 3 {
			f.objects["web"] = object(t, readyDeployment)
		}
	}
	var summaries []string
	w := &waiter{reader: reader, namespace: "review", interval: time.Millisecond,
		progress: func(summary string, _ []readiness.Progress) { summaries = append(summaries, summary) }}
	if err := w.waitReady(context.Background(), []objectRef{deploymentRef}, time.Minute); err != nil {
		t.Fatalf("waitReady: %v", err)
	}
	if len(summaries) != 2 || summaries[0] != "Deployment.apps/web ready 1/2 (InProgress)" || summaries[1] != "Deployment.apps/web ready 2/2 (Current)" {
		t.Errorf("progress reported %q; want one line per change: ready 1/2 then 2/2", summaries)
	}
}

func TestWaitReady_failsFastOnCrashLoop(t *testing.T) {
	pod := object(t, `
apiVersion: v1
kind: Pod
metadata: {name: web-5d8f-x2x, namespace: review, labels: {app: web}}
status:
  phase: Running
  containerStatuses:
  - name: web
    ready: false
    restartCount: 3
    state: {waiting: {reason: CrashLoopBackOff, message: "back-off 40s restarting failed container=web"}}
`)
	reader := &fakeReader{objects: map[string]*unstructured.Unstructured{"web": object(t, progressingDeployment)}, pods: []*unstructured.Unstructured{pod}}
	w := &waiter{reader: reader, namespace: "review", interval: time.Millisecond}
	start := time.Now()
	// The wait's own timeout is an hour; the test's deadline turns a regression into a failure
	// instead of a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := w.waitReady(ctx, []objectRef{deploymentRef}, time.Hour)
	var failed *FailedError
	if !errors.As(err, &failed) {
		t.Fatalf("waitReady = %v, want a *FailedError", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("failure took %s; it must not wait for the timeout", time.Since(start))
	}
	for _, want := range []string{"Deployment.apps/web", "CrashLoopBackOff", "web-5d8f-x2x"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

func TestWaitReady_timeoutNamesWhatIsNotReady(t *testing.T) {
	reader := &fakeReader{objects: map[string]*unstructured.Unstructured{"web": object(t, progressingDeployment)}}
	missing := objectRef{Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, APIVersion: "v1", Kind: "ConfigMap", Namespace: "review", Name: "settings"}
	w := &waiter{reader: reader, namespace: "review", interval: time.Millisecond}
	err := w.waitReady(context.Background(), []objectRef{deploymentRef, missing}, 50*time.Millisecond)
	var timeout *TimeoutError
	if !errors.As(err, &timeout) {
		t.Fatalf("waitReady = %v, want a *TimeoutError", err)
	}
	if want := "Deployment.apps/web ready 1/2 (InProgress), ConfigMap/settings (NotFound)"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if len(timeout.Blocked) != 0 {
		t.Errorf("the timeout names blocked objects %+v; nothing was blocked", timeout.Blocked)
	}
}

func TestWaitReady_stopsWhenCancelled(t *testing.T) {
	reader := &fakeReader{objects: map[string]*unstructured.Unstructured{"web": object(t, progressingDeployment)}}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	w := &waiter{reader: reader, namespace: "review", interval: time.Millisecond}
	err := w.waitReady(ctx, []objectRef{deploymentRef}, time.Hour)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("waitReady = %v, want context.Canceled", err)
	}
	if !strings.Contains(err.Error(), "Deployment.apps/web ready 1/2") {
		t.Errorf("error %q does not say what was still pending", err)
	}
}

func TestWaitDeleted_namesFinalizers(t *testing.T) {
	stuck := object(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: review, deletionTimestamp: "2026-01-01T00:00:00Z", finalizers: [example.com/keep]}
`)
	reader := &fakeReader{objects: map[string]*unstructured.Unstructured{"settings": stuck}}
	ref := objectRef{Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, APIVersion: "v1", Kind: "ConfigMap", Namespace: "review", Name: "settings"}
	w := &waiter{reader: reader, namespace: "review", interval: time.Millisecond}
	err := w.waitDeleted(context.Background(), []objectRef{ref}, 30*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "ConfigMap/settings (Terminating, finalizers example.com/keep)") {
		t.Fatalf("waitDeleted = %v, want a timeout naming the object and its finalizer", err)
	}

	reader.step = func(f *fakeReader) { delete(f.objects, "settings") }
	if err := w.waitDeleted(context.Background(), []objectRef{ref}, time.Minute); err != nil {
		t.Fatalf("waitDeleted after the object went away: %v", err)
	}
}

const unschedulablePod = `
apiVersion: v1
kind: Pod
metadata: {name: web-5d8f-x2x, namespace: review, labels: {app: web}}
status:
  phase: Pending
  conditions:
  - {type: PodScheduled, status: "False", reason: Unschedulable, message: "0/1 nodes are available: 1 Insufficient cpu."}
`

// A pod no node can take may still be placed (a cluster autoscaler may add a node): the wait
// names why in its progress and its timeout, and fails early only when blockedTimeout says so.
func TestWaitReady_blockedObjectIsNamedAndFailsAfterBlockedTimeout(t *testing.T) {
	reader := &fakeReader{objects: map[string]*unstructured.Unstructured{"web": object(t, progressingDeployment)}, pods: []*unstructured.Unstructured{object(t, unschedulablePod)}}
	var summaries []string
	var mu sync.Mutex
	w := &waiter{reader: reader, namespace: "review", interval: time.Millisecond,
		progress: func(summary string, _ []readiness.Progress) {
			mu.Lock()
			summaries = append(summaries, summary)
			mu.Unlock()
		}}
	err := w.waitReady(context.Background(), []objectRef{deploymentRef}, 50*time.Millisecond)
	var timeout *TimeoutError
	if !errors.As(err, &timeout) {
		t.Fatalf("waitReady = %v, want a *TimeoutError", err)
	}
	want := "Deployment.apps/web ready 1/2 (InProgress; Unschedulable: pod web-5d8f-x2x: 0/1 nodes are available: 1 Insufficient cpu.)"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("timeout %q does not say %q", err, want)
	}
	if len(timeout.Blocked) != 1 || timeout.Blocked[0].Object != "Deployment.apps/web" || timeout.Blocked[0].Reason != "Unschedulable" {
		t.Errorf("the timeout's blocked objects are %+v; want the Deployment, Unschedulable", timeout.Blocked)
	}
	if len(summaries) == 0 || summaries[0] != want {
		t.Errorf("progress %q; want the reason in the first line", summaries)
	}

	w.blockedTimeout = 20 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	err = w.waitReady(ctx, []objectRef{deploymentRef}, time.Hour)
	var blocked *BlockedError
	if !errors.As(err, &blocked) {
		t.Fatalf("waitReady with blockedTimeout = %v, want a *BlockedError", err)
	}
	if elapsed := time.Since(start); elapsed < w.blockedTimeout {
		t.Errorf("failed after %s, before blockedTimeout %s", elapsed, w.blockedTimeout)
	}
	for _, part := range []string{"blocked for 20ms", "Deployment.apps/web: Unschedulable: pod web-5d8f-x2x: 0/1 nodes are available"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}
	if got := reader.eventLists["review"]; got == 0 {
		t.Error("the namespace's events were never listed")
	}
}

// Events are read with one LIST of the namespace per poll, however many objects there are.
func TestWaitReady_listsEventsOncePerNamespaceAndPoll(t *testing.T) {
	objects := map[string]*unstructured.Unstructured{}
	var refs []objectRef
	for _, name := range []string{"a", "b", "c", "d"} {
		objects[name] = object(t, "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: "+name+", namespace: review}\nstatus: {phase: Pending}\n")
		refs = append(refs, objectRef{Resource: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: "review", Name: name})
	}
	reader := &fakeReader{objects: objects}
	w := &waiter{reader: reader, namespace: "review", interval: 5 * time.Millisecond}
	_ = w.waitReady(context.Background(), refs, 30*time.Millisecond)
	polls := reader.gets / len(refs) // one GET per claim and poll
	if got := reader.eventLists["review"]; polls == 0 || got != polls {
		t.Errorf("events listed %d times in %d polls of %d claims; want one LIST per poll", got, polls, len(refs))
	}
}

const runningHookJob = `
apiVersion: batch/v1
kind: Job
metadata: {name: certgen, namespace: review, generation: 1}
spec:
  ttlSecondsAfterFinished: 0
  template: {spec: {restartPolicy: Never, containers: [{name: certgen, image: certgen}]}}
status:
  active: 1
`

var hookJobRef = objectRef{
	Resource:   schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"},
	APIVersion: "batch/v1", Kind: "Job", Namespace: "review", Name: "certgen",
}

// A hook Job with ttlSecondsAfterFinished: 0 is deleted the moment it completes, often between
// two polls: the hook wait takes it as finished, as Helm's hook watch does, while the
// release's wait still waits for an object that is not there.
func TestWaitHooks_goneHookHasFinished(t *testing.T) {
	reader := &fakeReader{objects: map[string]*unstructured.Unstructured{"certgen": object(t, runningHookJob)}}
	polls := 0
	reader.step = func(f *fakeReader) {
		if polls++; polls == 2 {
			delete(f.objects, "certgen")
		}
	}
	w := &waiter{reader: reader, namespace: "review", interval: time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.waitHooks(ctx, []objectRef{hookJobRef}, time.Hour); err != nil {
		t.Fatalf("waitHooks after the Job was deleted: %v", err)
	}
	if polls < 2 {
		t.Errorf("the wait ended after %d polls, before the Job was gone", polls)
	}
	err := w.waitReady(context.Background(), []objectRef{hookJobRef}, 30*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "Job.batch/certgen (NotFound)") {
		t.Errorf("waitReady of a missing Job = %v, want a timeout naming it NotFound", err)
	}
}
