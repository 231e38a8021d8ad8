package readiness

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/refusal"
)

// A rule's finding about one object: it failed for good (final), or it waits for a reason that
// might still clear by itself (a node the cluster autoscaler may add, a provisioner that
// retries, a load balancer being built).
type finding struct {
	Failure
	final bool
}

// Reasons of the findings that are not Kubernetes' own reason strings.
const (
	// ReasonLoadBalancerPending: a LoadBalancer Service has no address yet.
	ReasonLoadBalancerPending = "LoadBalancerPending"
)

// failedCreateFinding rates the message of a workload controller that could not create a pod.
// Admission that refuses the pod (Pod Security, a LimitRange, an admission webhook or policy
// that denied it) refuses it again on every retry: final. A ResourceQuota that is exhausted is
// final too, unless pods of the namespace are terminating and will free it. Anything else (a
// webhook that did not answer, a ServiceAccount not created yet) may clear.
func failedCreateFinding(message string, terminatingPods int) finding {
	f := finding{Failure: Failure{Reason: "FailedCreate", Message: message}}
	switch refusal.ClassifyCreate(message).Class {
	case refusal.Quota:
		f.final = terminatingPods == 0
	case refusal.Webhook, refusal.Policy, refusal.PodSecurity, refusal.Admission:
		f.final = true
	}
	return f
}

// workloadCreateFinding finds why a workload's controller cannot create its pods: the
// ReplicaFailure condition of a Deployment or ReplicaSet, the newest FailedCreate event of a
// StatefulSet, DaemonSet or Job.
func workloadCreateFinding(obj *unstructured.Unstructured, events *eventIndex, terminatingPods int) (finding, bool) {
	switch obj.GetKind() {
	case "Deployment", "ReplicaSet":
		if obj.GetKind() == "Deployment" && intField(obj, 0, "status", "observedGeneration") < obj.GetGeneration() {
			return finding{}, false
		}
		if c, _ := ConditionOf(obj, "ReplicaFailure"); c.True() && c.Reason == "FailedCreate" {
			return failedCreateFinding(c.Message, terminatingPods), true
		}
	case "StatefulSet", "DaemonSet", "Job":
		if e, ok := events.latest(string(obj.GetUID()), obj.GetNamespace(), obj.GetKind(), obj.GetName(), "FailedCreate"); ok {
			return failedCreateFinding(e.message, terminatingPods), true
		}
	}
	return finding{}, false
}

// podFinding finds why a pod that has not failed is not ready: the scheduler cannot place it
// (or its claim cannot bind), or a container fails its readiness probe.
func podFinding(pod *unstructured.Unstructured, events *eventIndex) (finding, bool) {
	if c, _ := ConditionOf(pod, "PodScheduled"); c.Status == "False" && c.Reason == "Unschedulable" {
		for _, claim := range podClaims(pod) {
			if f, ok := claimFinding(pod.GetNamespace(), "", claim, events); ok && f.final {
				f.Message = fmt.Sprintf("pod %s: PersistentVolumeClaim %s: %s", pod.GetName(), claim, f.Message)
				return f, true
			}
		}
		return finding{Failure: Failure{Reason: "Unschedulable", Message: fmt.Sprintf("pod %s: %s", pod.GetName(), c.Message)}}, true
	}
	phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase")
	if c, _ := ConditionOf(pod, "Ready"); phase != "Running" || c.True() {
		return finding{}, false
	}
	if e, ok := events.latest(string(pod.GetUID()), pod.GetNamespace(), "Pod", pod.GetName(), "Unhealthy"); ok && strings.HasPrefix(e.message, "Readiness probe") {
		where := "pod " + pod.GetName()
		if c := containerOfFieldPath(e.fieldPath); c != "" {
			where += " container " + c
		}
		return finding{Failure: Failure{Reason: "Unhealthy", Message: where + ": " + e.message}}, true
	}
	return finding{}, false
}

// claimFinding finds why a PersistentVolumeClaim does not bind, from its events. A class that
// does not exist, and no class where the cluster has no default one, are final: no
// provisioner will ever act on the claim. A provisioner's failure (it retries), a provisioner
// not yet seen working, or a claim waiting for its first consumer may clear.
func claimFinding(namespace, uid, name string, events *eventIndex) (finding, bool) {
	// The PV controller repeats its "waiting for the provisioner" events while a provisioner
	// fails, so a failure, which says why, is looked for first, however recent the waiting is.
	e, ok := events.latest(uid, namespace, "PersistentVolumeClaim", name, "ProvisioningFailed", "FailedBinding")
	if !ok {
		e, ok = events.latest(uid, namespace, "PersistentVolumeClaim", name, "ExternalProvisioning", "WaitForFirstConsumer")
	}
	if !ok {
		return finding{}, false
	}
	f := finding{Failure: Failure{Reason: e.reason, Message: e.message}}
	switch {
	case e.reason == "ProvisioningFailed" && strings.Contains(e.message, "storageclass.storage.k8s.io") && strings.Contains(e.message, "not found"):
		f.final = true
	case e.reason == "FailedBinding" && strings.Contains(e.message, "no storage class is set"):
		f.final = true
	}
	return f, true
}

// serviceFinding finds a LoadBalancer Service without an address. `helm --wait` waits for
// one, and so does this: a Service nobody can reach is not ready. A Service with
// spec.externalIPs is reachable without one.
func serviceFinding(obj *unstructured.Unstructured, events *eventIndex) (finding, bool) {
	serviceType, _, _ := unstructured.NestedString(obj.Object, "spec", "type")
	if serviceType != "LoadBalancer" {
		return finding{}, false
	}
	if ips, _, _ := unstructured.NestedSlice(obj.Object, "spec", "externalIPs"); len(ips) > 0 {
		return finding{}, false
	}
	if ingress, _, _ := unstructured.NestedSlice(obj.Object, "status", "loadBalancer", "ingress"); len(ingress) > 0 {
		return finding{}, false
	}
	if e, ok := events.latest(string(obj.GetUID()), obj.GetNamespace(), "Service", obj.GetName(), "SyncLoadBalancerFailed"); ok {
		return finding{Failure: Failure{Reason: e.reason, Message: e.message}}, true
	}
	message := "no load balancer address yet"
	if class, _, _ := unstructured.NestedString(obj.Object, "spec", "loadBalancerClass"); class != "" {
		message += fmt.Sprintf(" (spec.loadBalancerClass %s: is its controller running?)", class)
	}
	return finding{Failure: Failure{Reason: ReasonLoadBalancerPending, Message: message}}, true
}

// podClaims names the PersistentVolumeClaims a pod mounts.
func podClaims(pod *unstructured.Unstructured) []string {
	volumes, _, _ := unstructured.NestedSlice(pod.Object, "spec", "volumes")
	var claims []string
	for _, v := range volumes {
		volume, _ := v.(map[string]any)
		if name, found, _ := unstructured.NestedString(volume, "persistentVolumeClaim", "claimName"); found && name != "" {
			claims = append(claims, name)
		}
	}
	return claims
}
