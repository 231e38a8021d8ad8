package readiness

import (
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// Failure is an object that will not become ready without a change.
type Failure struct {
	Object  string // manifest key, "Deployment.apps/web"
	Reason  string // CamelCase, "CrashLoopBackOff", "ProgressDeadlineExceeded"
	Message string // what failed, naming the pod and container where there is one
}

func (f Failure) String() string {
	return fmt.Sprintf("%s: %s: %s", f.Object, f.Reason, f.Message)
}

// Progress is how far one object is: for workloads the ready and desired
// replicas (pods, for a Job its completions), for anything else 0/1 or 1/1.
// Reason and Message say why an object that is not ready waits, when that
// is known: "Unschedulable", "pod web-x: 0/1 nodes are available: ...".
type Progress struct {
	Object         string
	Ready, Desired int64
	Status         string // kstatus status: InProgress, Current, Failed, Terminating, NotFound, Unknown
	Reason         string
	Message        string
}

func (p Progress) String() string {
	s := fmt.Sprintf("%s ready %d/%d (%s)", p.Object, p.Ready, p.Desired, p.Status)
	if p.Reason != "" {
		s += ": " + p.Reason + ": " + p.Message
	}
	return s
}

// Result is the state of a set of objects at one moment.
type Result struct {
	// Ready is true when every object is Current and nothing failed.
	Ready bool
	// Failures lists the failed objects, sorted by object.
	Failures []Failure
	// Blocked lists the objects that wait for a reason that might still
	// clear by itself (a pod no node can take yet, a volume the provisioner
	// keeps failing to create, a load balancer without an address), sorted
	// by object. The caller decides how long to wait for them.
	Blocked []Failure
	// Progress has one entry per workload and per object that is not yet
	// Current, in the order of objects.
	Progress []Progress
}

// Input is one snapshot of a release's objects and of what tells about them.
type Input struct {
	// Objects are the release's objects; a nil object is skipped.
	Objects []*unstructured.Unstructured
	// Pods are the pods of the objects' namespaces (more do no harm: each
	// workload picks its own by its selector).
	Pods []*unstructured.Unstructured
	// Events are the core/v1 Events of the objects' namespaces.
	Events []*unstructured.Unstructured
	// Since drops the events last seen before it, an earlier rollout's.
	// Zero keeps them all.
	Since time.Time
}

// Evaluate computes the readiness of a snapshot.
func Evaluate(in Input) Result {
	result := Result{Ready: true}
	podsByNamespace, terminating := indexPods(in.Pods)
	events := indexEvents(in.Events, in.Since)
	for _, obj := range in.Objects {
		if obj == nil {
			continue
		}
		key := manifest.Key(obj.Object, obj.GetNamespace())
		computed, err := status.Compute(obj)
		if err != nil {
			computed = &status.Result{Status: status.UnknownStatus, Message: err.Error()}
		}
		found, ok := findingFor(obj, computed.Status, podsByNamespace[obj.GetNamespace()], events, terminating[obj.GetNamespace()])
		if ok && obj.GetKind() == "Service" || computed.Status == status.CurrentStatus && jobRunning(obj) {
			// kstatus counts a Service current once it has a cluster IP, and a Job once it
			// has started; like `helm --wait --wait-for-jobs`, ready waits for an address and
			// for the Job to complete.
			computed.Status = status.InProgressStatus
		}
		if computed.Status != status.CurrentStatus {
			result.Ready = false
		}

		var failures []Failure
		switch {
		case ok && found.final:
			failures = []Failure{found.Failure}
		case computed.Status == status.FailedStatus:
			failures = []Failure{statusFailure(obj, computed)}
		case ok:
			found.Object = key
			result.Blocked = append(result.Blocked, found.Failure)
		}
		for i := range failures {
			failures[i].Object = key
		}
		if len(failures) > 0 {
			result.Ready = false
			result.Failures = append(result.Failures, failures...)
		}

		progress := Progress{Object: key, Ready: 0, Desired: 1, Status: computed.Status.String()}
		if ok && !found.final {
			progress.Reason, progress.Message = found.Reason, found.Message
		}
		if ready, desired, isWorkload := replicaProgress(obj); isWorkload {
			progress.Ready, progress.Desired = ready, desired
			result.Progress = append(result.Progress, progress)
		} else if computed.Status != status.CurrentStatus {
			result.Progress = append(result.Progress, progress)
		}
	}
	byObject := func(list []Failure) func(i, j int) bool {
		return func(i, j int) bool { return list[i].Object < list[j].Object }
	}
	sort.SliceStable(result.Failures, byObject(result.Failures))
	sort.SliceStable(result.Blocked, byObject(result.Blocked))
	return result
}

// statusFailure describes an object kstatus found Failed, with the reason
// of the object's own condition where kstatus generalizes it.
func statusFailure(obj *unstructured.Unstructured, computed *status.Result) Failure {
	if obj.GetKind() == "Job" && obj.GroupVersionKind().Group == "batch" {
		if reason, message, ok := conditionTrue(obj, "Failed"); ok {
			if reason == "" {
				reason = "JobFailed"
			}
			return Failure{Reason: reason, Message: message}
		}
	}
	failure := Failure{Reason: "Failed", Message: computed.Message}
	for _, c := range computed.Conditions {
		if c.Type == status.ConditionStalled && c.Status == "True" {
			if c.Reason != "" {
				failure.Reason = c.Reason
			}
			if c.Message != "" {
				failure.Message = c.Message
			}
		}
	}
	return failure
}

// jobRunning tells a Job that has not completed yet.
func jobRunning(obj *unstructured.Unstructured) bool {
	if obj.GetKind() != "Job" || obj.GroupVersionKind().Group != "batch" {
		return false
	}
	_, _, complete := conditionTrue(obj, "Complete")
	return !complete
}

// conditionTrue returns the reason and message of obj's condition of the
// given type when its status is True.
func conditionTrue(obj *unstructured.Unstructured, conditionType string) (reason, message string, ok bool) {
	c, _ := ConditionOf(obj, conditionType)
	return c.Reason, c.Message, c.True()
}

// replicaProgress returns the ready and desired pods of a workload.
func replicaProgress(obj *unstructured.Unstructured) (ready, desired int64, isWorkload bool) {
	group := obj.GroupVersionKind().Group
	switch {
	case group == "apps" && obj.GetKind() == "Deployment":
		desired = intField(obj, 1, "spec", "replicas")
		ready = min(intField(obj, 0, "status", "updatedReplicas"), intField(obj, 0, "status", "availableReplicas"))
	case group == "apps" && obj.GetKind() == "StatefulSet":
		desired = intField(obj, 1, "spec", "replicas")
		ready = intField(obj, 0, "status", "readyReplicas")
		if revision, _, _ := unstructured.NestedString(obj.Object, "status", "updateRevision"); revision != "" {
			ready = min(ready, intField(obj, 0, "status", "updatedReplicas"))
		}
	case group == "apps" && obj.GetKind() == "DaemonSet":
		desired = intField(obj, 0, "status", "desiredNumberScheduled")
		ready = min(intField(obj, 0, "status", "updatedNumberScheduled"), intField(obj, 0, "status", "numberAvailable"))
	case group == "apps" && obj.GetKind() == "ReplicaSet":
		desired = intField(obj, 1, "spec", "replicas")
		ready = intField(obj, 0, "status", "availableReplicas")
	case group == "batch" && obj.GetKind() == "Job":
		parallelism := intField(obj, 1, "spec", "parallelism")
		desired = intField(obj, parallelism, "spec", "completions")
		ready = intField(obj, 0, "status", "succeeded")
	default:
		return 0, 0, false
	}
	return ready, desired, true
}

// intField reads an integer field, or def when it is absent.
func intField(obj *unstructured.Unstructured, def int64, fields ...string) int64 {
	value, found, err := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	if !found || err != nil {
		return def
	}
	switch v := value.(type) {
	case int64:
		return v
	case int:
		return int64(v)
	case int32:
		return int64(v)
	case float64:
		return int64(v)
	default:
		return def
	}
}
