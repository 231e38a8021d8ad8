package readiness

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The wait of these fixtures started at 10:00; events before it are an earlier rollout's.
var fixtureSince = time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)

func TestEvaluate_whyObjectsAreNotReady(t *testing.T) {
	tests := []struct {
		fixture  string
		failures []wantFailure
		blocked  []wantFailure
	}{
		{
			fixture: "deployment-unschedulable.yaml",
			blocked: []wantFailure{{object: "Deployment.apps/web", reason: "Unschedulable",
				message: []string{"pod web-5d8f7c9b6-aaaaa: 0/1 nodes are available: 1 Insufficient ephemeral-storage."}}},
		},
		{
			fixture: "deployment-quota-exceeded.yaml",
			failures: []wantFailure{{object: "Deployment.apps/web", reason: "FailedCreate",
				message: []string{`pods "web-5d8f7c9b6-x7k2p" is forbidden: exceeded quota: review-x, requested: limits.cpu=2`}}},
		},
		{
			fixture: "statefulset-podsecurity.yaml",
			failures: []wantFailure{{object: "StatefulSet.apps/db", reason: "FailedCreate",
				message: []string{`violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`}}},
		},
		{
			fixture: "job-webhook-denied.yaml",
			failures: []wantFailure{{object: "Job.batch/migrate", reason: "FailedCreate",
				message: []string{`admission webhook "images.policy.example.com" denied the request: image registry.example/migrate is not signed`}}},
		},
		{
			fixture: "daemonset-limitrange.yaml",
			failures: []wantFailure{{object: "DaemonSet.apps/agent", reason: "FailedCreate",
				message: []string{"maximum cpu usage per Container is 1, but limit is 2"}}},
		},
		{
			fixture: "pvc-class-not-found.yaml",
			failures: []wantFailure{
				{object: "PersistentVolumeClaim/data", reason: "ProvisioningFailed", message: []string{`storageclass.storage.k8s.io "fast" not found`}},
				{object: "PersistentVolumeClaim/logs", reason: "FailedBinding", message: []string{"no storage class is set"}},
			},
			blocked: []wantFailure{{object: "PersistentVolumeClaim/cache", reason: "ProvisioningFailed",
				message: []string{`failed to provision volume with StorageClass "broken": volume quota of the project exhausted`}}},
		},
		{
			fixture: "statefulset-claim-class-not-found.yaml",
			failures: []wantFailure{{object: "StatefulSet.apps/db", reason: "ProvisioningFailed",
				message: []string{`pod db-0: PersistentVolumeClaim data-db-0: storageclass.storage.k8s.io "fast" not found`}}},
		},
		{
			fixture: "deployment-unready.yaml",
			blocked: []wantFailure{{object: "Deployment.apps/web", reason: "Unhealthy",
				message: []string{"pod web-5d8f7c9b6-aaaaa container web: Readiness probe failed: HTTP probe failed with statuscode: 503"}}},
		},
		{
			fixture: "service-loadbalancer.yaml",
			blocked: []wantFailure{
				{object: "Service/failing", reason: "SyncLoadBalancerFailed", message: []string{"no available IPs"}},
				{object: "Service/pending", reason: ReasonLoadBalancerPending, message: []string{"no load balancer address yet"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.fixture, ".yaml"), func(t *testing.T) {
			in := fixtureInput(t, tt.fixture)
			in.Since = fixtureSince
			result := Evaluate(in)
			if result.Ready {
				t.Error("ready, want not ready")
			}
			checkFailures(t, result.Failures, tt.failures)
			t.Run("blocked", func(t *testing.T) { checkFailures(t, result.Blocked, tt.blocked) })
			// The progress of each blocked object says why it waits.
			for _, b := range result.Blocked {
				found := false
				for _, p := range result.Progress {
					found = found || p.Object == b.Object && p.Reason == b.Reason && p.Message == b.Message
				}
				if !found {
					t.Errorf("progress %v does not say why %s waits", result.Progress, b.Object)
				}
			}
		})
	}
}

// A ResourceQuota that terminating pods will free may still admit the pods: that waits.
func TestEvaluate_quotaFreedByTerminatingPodsWaits(t *testing.T) {
	in := fixtureInput(t, "deployment-quota-exceeded.yaml")
	in.Pods = append(in.Pods, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "old", "namespace": "review-x", "deletionTimestamp": "2026-01-01T10:00:00Z"},
	}})
	result := Evaluate(in)
	checkFailures(t, result.Failures, nil)
	checkFailures(t, result.Blocked, []wantFailure{{object: "Deployment.apps/web", reason: "FailedCreate", message: []string{"exceeded quota"}}})
}

// Events from before the wait started are an earlier rollout's.
func TestEvaluate_ignoresEventsBeforeSince(t *testing.T) {
	in := fixtureInput(t, "daemonset-limitrange.yaml")
	in.Since = fixtureSince.Add(time.Minute)
	result := Evaluate(in)
	if len(result.Failures) != 0 || len(result.Blocked) != 0 {
		t.Errorf("failures %v, blocked %v; an event from before the wait must not count", result.Failures, result.Blocked)
	}
}

func TestEvaluate_loadBalancerWithAnAddressIsReady(t *testing.T) {
	objects, _ := fixture(t, "service-loadbalancer.yaml")
	var ready []*unstructured.Unstructured
	for _, obj := range objects {
		if name := obj.GetName(); name == "public" || name == "external" {
			ready = append(ready, obj)
		}
	}
	result := Evaluate(Input{Objects: ready})
	if !result.Ready || len(result.Progress) != 0 {
		t.Errorf("result = %+v, want ready with nothing pending", result)
	}
}

func TestProgress_stringSaysWhy(t *testing.T) {
	p := Progress{Object: "Deployment.apps/web", Ready: 0, Desired: 1, Status: "InProgress", Reason: "Unschedulable", Message: "pod web-x: 0/1 nodes are available"}
	if got, want := p.String(), "Deployment.apps/web ready 0/1 (InProgress): Unschedulable: pod web-x: 0/1 nodes are available"; !reflect.DeepEqual(got, want) {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
