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

func indexPods(pods []*unstructured.Unstructured) map[string]*podsInNamespace {
	byNamespace := map[string]*podsInNamespace{}
	for _, pod := range pods {
		if pod == nil || pod.GetDeletionTimestamp() != nil {
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
	return byNamespace
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

// podFailures returns at most one failure for obj: the first of its current
// pods (by name) with a container waiting for a failing reason.
func podFailures(obj *unstructured.Unstructured, pods *podsInNamespace) []Failure {
	var candidates []*unstructured.Unstructured
	group, kind := obj.GroupVersionKind().Group, obj.GetKind()
	switch {
	case group == "" && kind == "Pod":
		candidates = []*unstructured.Unstructured{obj}
	case group == "apps" && (kind == "Deployment" || kind == "StatefulSet" || kind == "DaemonSet" || kind == "ReplicaSet"),
		group == "batch" && kind == "Job":
		candidates = currentPods(obj, selectedPods(obj, pods))
	default:
		return nil
	}

	var first *Failure
	failing := 0
	for _, pod := range candidates {
		if f, ok := podFailure(pod); ok {
			failing++
			if first == nil {
				first = &f
			}
		}
	}
	if first == nil {
		return nil
	}
	if failing > 1 {
		first.Message += fmt.Sprintf(" (%d of %d pods fail)", failing, len(candidates))
	}
	return []Failure{*first}
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
		_, message, _ := conditionAnyStatus(obj, "Progressing")
		m := replicaSetInCondition.FindStringSubmatch(message)
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

// conditionAnyStatus returns the status and message of obj's condition of
// the given type.
func conditionAnyStatus(obj *unstructured.Unstructured, conditionType string) (status, message string, found bool) {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		condition, _ := c.(map[string]any)
		if condition["type"] == conditionType {
			status, _ = condition["status"].(string)
			message, _ = condition["message"].(string)
			return status, message, true
		}
	}
	return "", "", false
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
