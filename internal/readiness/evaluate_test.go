package readiness

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestEvaluate_crashLoopFailsFast(t *testing.T) {
	objects, pods := fixture(t, "deployment-crashloop.yaml")
	result := Evaluate(Input{Objects: objects, Pods: pods})
	if result.Ready {
		t.Error("a crash-looping Deployment is ready")
	}
	checkFailures(t, result.Failures, []wantFailure{{
		object: "Deployment.apps/web",
		reason: "CrashLoopBackOff",
		message: []string{
			"pod web-7c9d8b6f5-ccccc container web is waiting: CrashLoopBackOff",
			"back-off 2m40s restarting failed container=web",
			"last terminated: Error, exit code 1",
		},
	}})
	if strings.Contains(result.Failures[0].Message, "panic: boom") {
		t.Error("the failure quotes the application's termination message, which may hold anything")
	}
	if want := []Progress{{Object: "Deployment.apps/web", Ready: 1, Desired: 2, Status: "InProgress"}}; !reflect.DeepEqual(result.Progress, want) {
		t.Errorf("progress = %v, want %v", result.Progress, want)
	}
}

func TestEvaluate(t *testing.T) {
	tests := []struct {
		fixture  string
		ready    bool
		failures []wantFailure
		progress []Progress
	}{
		{
			fixture:  "deployment-ready.yaml",
			ready:    true,
			progress: []Progress{{Object: "Deployment.apps/web", Ready: 2, Desired: 2, Status: "Current"}},
		},
		{
			fixture:  "deployment-rolling.yaml",
			progress: []Progress{{Object: "Deployment.apps/web", Ready: 1, Desired: 2, Status: "InProgress"}},
		},
		{
			fixture:  "deployment-fixing-crashloop.yaml",
			progress: []Progress{{Object: "Deployment.apps/web", Ready: 0, Desired: 1, Status: "InProgress"}},
		},
		{
			fixture:  "deployment-not-observed.yaml",
			progress: []Progress{{Object: "Deployment.apps/web", Ready: 0, Desired: 1, Status: "InProgress"}},
		},
		{
			fixture: "deployment-imagepullbackoff.yaml",
			failures: []wantFailure{{
				object:  "Deployment.apps/web",
				reason:  "ErrImagePull",
				message: []string{"pod web-5d8f7c9b6-aaaaa container web", `registry.example/web:nope": not found`, "(2 of 2 pods fail)"},
			}},
			progress: []Progress{{Object: "Deployment.apps/web", Ready: 0, Desired: 2, Status: "InProgress"}},
		},
		{
			fixture: "deployment-progress-deadline.yaml",
			failures: []wantFailure{{
				object:  "Deployment.apps/web",
				reason:  "ProgressDeadlineExceeded",
				message: []string{`ReplicaSet "web-7c9d8b6f5" has timed out progressing.`},
			}},
			progress: []Progress{{Object: "Deployment.apps/web", Ready: 1, Desired: 1, Status: "Failed"}},
		},
		{
			fixture: "statefulset-createcontainerconfigerror.yaml",
			failures: []wantFailure{{
				object:  "StatefulSet.apps/db",
				reason:  "CreateContainerConfigError",
				message: []string{"pod db-1 container db", "couldn't find key password in Secret review-x/db"},
			}},
			progress: []Progress{{Object: "StatefulSet.apps/db", Ready: 1, Desired: 2, Status: "InProgress"}},
		},
		{
			fixture: "daemonset-invalidimagename.yaml",
			failures: []wantFailure{{
				object:  "DaemonSet.apps/agent",
				reason:  "InvalidImageName",
				message: []string{"pod agent-new container agent", "invalid reference format"},
			}},
			progress: []Progress{{Object: "DaemonSet.apps/agent", Ready: 1, Desired: 2, Status: "InProgress"}},
		},
		{
			fixture: "job-failed.yaml",
			failures: []wantFailure{{
				object:  "Job.batch/migrate",
				reason:  "BackoffLimitExceeded",
				message: []string{"Job has reached the specified backoff limit; pod migrate-xxxxx container migrate terminated: Error, exit code 2"},
			}},
			progress: []Progress{{Object: "Job.batch/migrate", Ready: 0, Desired: 1, Status: "Failed"}},
		},
		{
			fixture:  "job-complete.yaml",
			ready:    true,
			progress: []Progress{{Object: "Job.batch/migrate", Ready: 1, Desired: 1, Status: "Current"}},
		},
		{
			fixture:  "job-running.yaml",
			progress: []Progress{{Object: "Job.batch/migrate", Ready: 0, Desired: 1, Status: "InProgress"}},
		},
		{
			fixture: "pod-crashloop.yaml",
			failures: []wantFailure{{
				object:  "Pod/debug",
				reason:  "CrashLoopBackOff",
				message: []string{"pod debug container shell", "last terminated: OOMKilled, exit code 137"},
			}},
			progress: []Progress{{Object: "Pod/debug", Ready: 0, Desired: 1, Status: "Failed"}},
		},
		{
			fixture: "custom-resources.yaml",
			failures: []wantFailure{{
				object:  "Widget.test.gitlabk8s.io/stuck",
				reason:  "QuotaExceeded",
				message: []string{"no capacity left in the region"},
			}},
			progress: []Progress{
				{Object: "Widget.test.gitlabk8s.io/pending", Ready: 0, Desired: 1, Status: "InProgress"},
				{Object: "Widget.test.gitlabk8s.io/stuck", Ready: 0, Desired: 1, Status: "Failed"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.fixture, ".yaml"), func(t *testing.T) {
			objects, pods := fixture(t, tt.fixture)
			result := Evaluate(Input{Objects: objects, Pods: pods})
			if result.Ready != tt.ready {
				t.Errorf("ready = %v, want %v", result.Ready, tt.ready)
			}
			checkFailures(t, result.Failures, tt.failures)
			if !reflect.DeepEqual(result.Progress, tt.progress) {
				t.Errorf("progress = %v, want %v", result.Progress, tt.progress)
			}
		})
	}
}

func TestEvaluate_podsOfOtherNamespacesAndTerminatingPods(t *testing.T) {
	objects, pods := fixture(t, "deployment-crashloop.yaml")
	for _, pod := range pods {
		pod.SetNamespace("elsewhere")
	}
	if result := Evaluate(Input{Objects: objects, Pods: pods}); len(result.Failures) != 0 {
		t.Errorf("pods of another namespace failed the Deployment: %v", result.Failures)
	}

	objects, pods = fixture(t, "deployment-crashloop.yaml")
	for _, pod := range pods {
		pod.SetDeletionTimestamp(&metav1Now)
	}
	if result := Evaluate(Input{Objects: objects, Pods: pods}); len(result.Failures) != 0 {
		t.Errorf("terminating pods failed the Deployment: %v", result.Failures)
	}
}

func TestEvaluate_nothingIsReady(t *testing.T) {
	if result := Evaluate(Input{}); !result.Ready || len(result.Failures) != 0 || len(result.Progress) != 0 {
		t.Errorf("Evaluate(Input{}) = %+v", result)
	}
	if result := Evaluate(Input{Objects: []*unstructured.Unstructured{nil}}); !result.Ready {
		t.Errorf("a nil object is not skipped: %+v", result)
	}
}

func TestFailureAndProgressStrings(t *testing.T) {
	f := Failure{Object: "Deployment.apps/web", Reason: "CrashLoopBackOff", Message: "pod web-1 container web is waiting: CrashLoopBackOff"}
	if got, want := f.String(), "Deployment.apps/web: CrashLoopBackOff: pod web-1 container web is waiting: CrashLoopBackOff"; got != want {
		t.Errorf("Failure.String() = %q, want %q", got, want)
	}
	p := Progress{Object: "Deployment.apps/web", Ready: 1, Desired: 3, Status: "InProgress"}
	if got, want := p.String(), "Deployment.apps/web ready 1/3 (InProgress)"; got != want {
		t.Errorf("Progress.String() = %q, want %q", got, want)
	}
}

var metav1Now = metav1.Now()
