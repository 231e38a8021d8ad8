package readiness

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// FailingWaitingReasons are the reasons a container waits for that no
// amount of waiting fixes: the image cannot be pulled, the container keeps
// crashing, or its configuration (a missing ConfigMap or Secret key) is
// wrong.
var FailingWaitingReasons = []string{
	"CrashLoopBackOff",
	"ImagePullBackOff",
	"ErrImagePull",
	"CreateContainerConfigError",
	"InvalidImageName",
}

// Labels and annotations the workload controllers put on pods to tell
// revisions apart.
const (
	statefulSetRevisionLabel     = "controller-revision-hash"
	daemonSetGenerationLabel     = "pod-template-generation"
	daemonSetGenerationAnnotaton = "deprecated.daemonset.template.generation"
)

// replicaSetInCondition finds the ReplicaSet a Deployment's Progressing
// condition names: `Created new replica set "web-5d8f"`, `ReplicaSet
// "web-5d8f" is progressing.`, `... has timed out progressing.`.
var replicaSetInCondition = regexp.MustCompile(`(?:[Rr]eplica ?[Ss]et) "([^"]+)"`)

// podsInNamespace holds the live (not terminating) pods of one namespace,
// sorted by name, and which of them carry each label, so that a workload
// looks at its own pods only and not at every pod of a large namespace.
type podsInNamespace struct {
	pods    []labelledPod
	byLabel map[string][]int // "key=value" to indexes into pods, ascending
}

// labelledPod keeps a pod's labels, read once: every workload of the
// namespace matches its selector against them.
type labelledPod struct {
	pod    *unstructured.Unstructured
	labels labels.Set
}

// indexPods also counts the terminating pods of each namespace: they will free quota.
func indexPods(pods []*unstructured.Unstructured) (byNamespace map[string]*podsInNamespace, terminating map[string]int) {
	byNamespace, terminating = map[string]*podsInNamespace{}, map[string]int{}
	for _, pod := range pods {
		if pod == nil {
			continue
		}
		if pod.GetDeletionTimestamp() != nil {
			terminating[pod.GetNamespace()]++
			continue
		}
		ns := byNamespace[pod.GetNamespace()]
		if ns == nil {
			ns = &podsInNamespace{byLabel: map[string][]int{}}
			byNamespace[pod.GetNamespace()] = ns
		}
		ns.pods = append(ns.pods, labelledPod{pod: pod, labels: pod.GetLabels()})
	}
	for _, ns := range byNamespace {
		sort.Slice(ns.pods, func(i, j int) bool { return ns.pods[i].pod.GetName() < ns.pods[j].pod.GetName() })
		for i, p := range ns.pods {
			for key, value := range p.labels {
				ns.byLabel[key+"="+value] = append(ns.byLabel[key+"="+value], i)
			}
		}
	}
	return byNamespace, terminating
}

// candidates returns the indexes of the pods that can match selector: those
// with the label of its first equality requirement, or all of them.
func (ns *podsInNamespace) candidates(selector labels.Selector) []int {
	requirements, _ := selector.Requirements()
	for _, r := range requirements {
		if op := r.Operator(); (op == selection.Equals || op == selection.DoubleEquals || op == selection.In) && r.Values().Len() == 1 {
			return ns.byLabel[r.Key()+"="+r.Values().List()[0]]
		}
	}
	all := make([]int, len(ns.pods))
	for i := range all {
		all[i] = i
	}
	return all
}

// findingFor returns at most one finding for obj, final ones first: the first
// of its current pods (by name) with a container waiting for a failing
// reason; why its controller cannot create pods; why its pods are not ready;
// why a claim does not bind or a Service has no address. Why an object is
// not ready is only looked for while kstatus does not find it Current.
func findingFor(obj *unstructured.Unstructured, computed status.Status, pods *podsInNamespace, events *eventIndex, terminatingPods int) (finding, bool) {
	var candidates []*unstructured.Unstructured
	group, kind := obj.GroupVersionKind().Group, obj.GetKind()
	workload := false
	switch {
	case group == "" && kind == "Pod":
		candidates = []*unstructured.Unstructured{obj}
	case group == "apps" && (kind == "Deployment" || kind == "StatefulSet" || kind == "DaemonSet" || kind == "ReplicaSet"),
		group == "batch" && kind == "Job":
		candidates = currentPods(obj, selectedPods(obj, pods))
		workload = true
	case group == "" && kind == "Service":
		return serviceFinding(obj, events)
	case group == "" && kind == "PersistentVolumeClaim":
		if phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); phase == "Bound" {
			return finding{}, false
		}
		return claimFinding(obj.GetNamespace(), string(obj.GetUID()), obj.GetName(), events)
	default:
		return finding{}, false
	}
	if f, ok := firstFinding(candidates, "pods fail", func(pod *unstructured.Unstructured) (finding, bool) {
		failure, ok := podFailure(pod)
		return finding{Failure: failure, final: true}, ok
	}); ok || computed == status.CurrentStatus {
		return f, ok
	}
	if group == "batch" && kind == "Job" {
		if f, ok := failedJobFinding(obj, candidates); ok {
			return f, true
		}
	}
	if workload {
		if f, ok := workloadCreateFinding(obj, events, terminatingPods); ok {
			return f, true
		}
	}
	return firstFinding(candidates, "pods", func(pod *unstructured.Unstructured) (finding, bool) { return podFinding(pod, events) })
}

// firstFinding returns the first final finding of pods, or else the first
// one, saying how many of the pods have one.
func firstFinding(pods []*unstructured.Unstructured, counted string, find func(*unstructured.Unstructured) (finding, bool)) (finding, bool) {
	var first *finding
	n := 0
	for _, pod := range pods {
		if f, ok := find(pod); ok {
			n++
			if first == nil || f.final && !first.final {
				first = &f
			}
		}
	}
	if first == nil {
		return finding{}, false
	}
	if n > 1 {
		first.Message += fmt.Sprintf(" (%d of %d %s)", n, len(pods), counted)
	}
	return *first, true
}

// selectedPods returns the pods obj's spec.selector matches. An object
// without a selector selects nothing: an empty selector would match every
// pod of the namespace.
func selectedPods(obj *unstructured.Unstructured, pods *podsInNamespace) []*unstructured.Unstructured {
	if pods == nil {
		return nil
	}
	raw, found, _ := unstructured.NestedMap(obj.Object, "spec", "selector")
	if !found || len(raw) == 0 {
		return nil
	}
	var labelSelector metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &labelSelector); err != nil {
		return nil
	}
	selector, err := metav1.LabelSelectorAsSelector(&labelSelector)
	if err != nil || selector.Empty() {
		return nil
	}
	var out []*unstructured.Unstructured
	for _, i := range pods.candidates(selector) {
		if p := pods.pods[i]; selector.Matches(p.labels) {
			out = append(out, p.pod)
		}
	}
	return out
}

// currentPods keeps the pods of obj's current revision, so the old pods a
// rollout replaces do not fail it. When the revision cannot be told, all
// pods count.
func currentPods(obj *unstructured.Unstructured, pods []*unstructured.Unstructured) []*unstructured.Unstructured {
	observed := intField(obj, 0, "status", "observedGeneration")
	upToDate := observed >= obj.GetGeneration()
	switch obj.GetKind() {
	case "Deployment":
		if !upToDate {
			// The controller has not yet acted on the new spec: every pod
			// there is belongs to an older revision.
			return nil
		}
		progressing, _ := ConditionOf(obj, "Progressing")
		m := replicaSetInCondition.FindStringSubmatch(progressing.Message)
		if m == nil {
			return pods
		}
		return filterPods(pods, func(pod *unstructured.Unstructured) bool {
			owner := metav1.GetControllerOfNoCopy(pod)
			return owner != nil && owner.Kind == "ReplicaSet" && owner.Name == m[1]
		})
	case "StatefulSet":
		if !upToDate {
			return nil
		}
		revision, _, _ := unstructured.NestedString(obj.Object, "status", "updateRevision")
		if revision == "" {
			return pods
		}
		return filterPods(pods, func(pod *unstructured.Unstructured) bool {
			return pod.GetLabels()[statefulSetRevisionLabel] == revision
		})
	case "DaemonSet":
		generation := obj.GetAnnotations()[daemonSetGenerationAnnotaton]
		if generation == "" {
			return pods
		}
		return filterPods(pods, func(pod *unstructured.Unstructured) bool {
			podGeneration, ok := pod.GetLabels()[daemonSetGenerationLabel]
			return !ok || podGeneration == generation
		})
	default:
		return pods
	}
}

func filterPods(pods []*unstructured.Unstructured, keep func(*unstructured.Unstructured) bool) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, pod := range pods {
		if keep(pod) {
			out = append(out, pod)
		}
	}
	return out
}

// podFailure reports the first container of pod (init containers first)
// waiting for a failing reason.
func podFailure(pod *unstructured.Unstructured) (Failure, bool) {
	for _, field := range []string{"initContainerStatuses", "containerStatuses"} {
		statuses, _, _ := unstructured.NestedSlice(pod.Object, "status", field)
		for _, s := range statuses {
			containerStatus, _ := s.(map[string]any)
			reason, _, _ := unstructured.NestedString(containerStatus, "state", "waiting", "reason")
			if !isFailingReason(reason) {
				continue
			}
			name, _ := containerStatus["name"].(string)
			message, _, _ := unstructured.NestedString(containerStatus, "state", "waiting", "message")
			var b strings.Builder
			fmt.Fprintf(&b, "pod %s container %s is waiting: %s", pod.GetName(), name, reason)
			if message != "" {
				fmt.Fprintf(&b, ": %s", message)
			}
			if last := lastTermination(containerStatus); last != "" {
				fmt.Fprintf(&b, "; last terminated: %s", last)
			}
			return Failure{Reason: reason, Message: b.String()}, true
		}
	}
	return Failure{}, false
}

// failedJobFinding describes a failed Job (a Helm hook, often) with the reason and message of
// its Failed condition and how its last failed pod ended.
func failedJobFinding(job *unstructured.Unstructured, pods []*unstructured.Unstructured) (finding, bool) {
	reason, message, ok := conditionTrue(job, "Failed")
	if !ok {
		return finding{}, false
	}
	if reason == "" {
		reason = "JobFailed"
	}
	// The last pod by name is not always the last to fail, but pods of one Job are
	// alike enough that any failed one tells why.
	for i := len(pods) - 1; i >= 0; i-- {
		if ended := failedContainer(pods[i]); ended != "" {
			message += "; pod " + pods[i].GetName() + " " + ended
			break
		}
	}
	return finding{Failure: Failure{Reason: reason, Message: message}, final: true}, true
}

// failedContainer describes the first container of pod that ended with an error: "container
// migrate terminated: Error, exit code 1". Its termination message is left out, as in
// lastTermination.
func failedContainer(pod *unstructured.Unstructured) string {
	for _, field := range []string{"initContainerStatuses", "containerStatuses"} {
		statuses, _, _ := unstructured.NestedSlice(pod.Object, "status", field)
		for _, s := range statuses {
			containerStatus, _ := s.(map[string]any)
			terminated, found, _ := unstructured.NestedMap(containerStatus, "state", "terminated")
			if !found {
				continue
			}
			if code, _ := terminated["exitCode"].(int64); code == 0 {
				continue
			}
			name, _ := containerStatus["name"].(string)
			reason, _ := terminated["reason"].(string)
			return fmt.Sprintf("container %s terminated: %s, exit code %v", name, reason, terminated["exitCode"])
		}
	}
	return ""
}

// lastTermination describes how a crash-looping container last ended. The
// termination message is left out: the application writes it, and it may
// hold anything, credentials included.
func lastTermination(containerStatus map[string]any) string {
	terminated, found, _ := unstructured.NestedMap(containerStatus, "lastState", "terminated")
	if !found {
		return ""
	}
	reason, _ := terminated["reason"].(string)
	var parts []string
	if reason != "" {
		parts = append(parts, reason)
	}
	if exitCode, ok := terminated["exitCode"]; ok && exitCode != nil {
		parts = append(parts, fmt.Sprintf("exit code %v", exitCode))
	}
	return strings.Join(parts, ", ")
}

func isFailingReason(reason string) bool {
	for _, r := range FailingWaitingReasons {
		if r == reason {
			return true
		}
	}
	return false
}
