package provider

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/environment"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
)

func TestOwnedByEnvironment_neverClaimsAnotherNamespace(t *testing.T) {
	const env, uid = "review/x", "uid-1"
	marked := func(envName string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", UID: uid,
			Labels: gitlab.OwnershipLabels("s"), Annotations: gitlab.OwnershipAnnotations(envName, "s", "")}}
	}
	plain := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", UID: uid}}
	tests := []struct {
		desc     string
		ns       *corev1.Namespace
		stateUID string
		names    []string
		want     bool
	}{
		{"marker of this environment", marked(env), "", []string{env}, true},
		{"marker of the old name after a rename", marked("review/old"), uid, []string{"review/old", env}, true},
		{"marker of another environment, even with our UID", marked("production"), uid, []string{env}, false},
		{"unmarked, the UID the state recorded (imported)", plain, uid, []string{env}, true},
		{"unmarked, recreated by someone else", plain, "uid-0", []string{env}, false},
		{"unmarked, no UID in the state", plain, "", []string{env}, false},
		{"marker without a name never matches an empty name", marked(""), "", []string{""}, false},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := ownedByEnvironment(tt.ns, tt.stateUID, tt.names...); got != tt.want {
				t.Errorf("ownedByEnvironment = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAttributePath_followsTheProblemPath(t *testing.T) {
	got := attributePath(environment.Attr("service_account").Attr("rules").Index(1).Attr("verbs").Index(0))
	want := path.Root("service_account").AtName("rules").AtListIndex(1).AtName("verbs").AtListIndex(0)
	if !got.Equal(want) {
		t.Errorf("attributePath = %s, want %s", got, want)
	}
	got = attributePath(environment.Attr("resource_quota").Key("requests.cpu"))
	if want := path.Root("resource_quota").AtMapKey("requests.cpu"); !got.Equal(want) {
		t.Errorf("attributePath = %s, want %s", got, want)
	}
}

func TestGrantHint_bindsTheIdentityInTheNamespace(t *testing.T) {
	tests := []struct{ identity, want string }{
		{"ci-job", "--user=ci-job"},
		{"system:serviceaccount:gitlab-agent:agent", "--serviceaccount=gitlab-agent:agent"},
	}
	for _, tt := range tests {
		hint := grantHint(tt.identity, "delete", "namespaces", "review-x")
		for _, want := range []string{tt.want, "--namespace=review-x", "--verb=delete --resource=namespaces"} {
			if !strings.Contains(hint, want) {
				t.Errorf("grantHint(%q) = %q, lacks %q", tt.identity, hint, want)
			}
		}
	}
}

// A namespace held by an aggregated API that does not answer gets its own diagnostic: it names
// the APIServices and the command that removes them, and it does not send the user after
// finalizers or a longer timeout, which would not help. Any other stuck namespace keeps the
// timeout's.
func TestNamespaceStuckDiagnostic_namesTheUnavailableAPIServices(t *testing.T) {
	unavailable := []kube.UnavailableAPIService{
		{Name: "v1beta1.external.metrics.k8s.io", Service: "keda/keda-operator-metrics-apiserver", Reason: "MissingEndpoints", Message: "endpoints have no addresses"},
		{Name: "v1beta1.metrics.k8s.io", Reason: "FailedDiscoveryCheck"},
	}
	blocked := namespaceStuckDiagnostic("review-x", &kube.NamespaceStuckError{
		Name: "review-x", Waited: kube.DiscoveryFailureGrace, Unavailable: unavailable, Err: kube.ErrDiscoveryBlocked,
		Blockers: []string{"NamespaceDeletionDiscoveryFailure: Discovery failed for some groups"},
	})
	if blocked.Summary() != "Namespace Deletion Blocked by an Unavailable API" {
		t.Errorf("summary %q", blocked.Summary())
	}
	for _, want := range []string{
		"has reported for 1m0s that discovery failed",
		"APIService v1beta1.external.metrics.k8s.io (Service keda/keda-operator-metrics-apiserver): MissingEndpoints: endpoints have no addresses",
		"APIService v1beta1.metrics.k8s.io: FailedDiscoveryCheck\n",
		"kubectl delete apiservice v1beta1.external.metrics.k8s.io v1beta1.metrics.k8s.io",
		"NamespaceDeletionDiscoveryFailure: Discovery failed for some groups",
		"The Terraform state was kept",
	} {
		if !strings.Contains(blocked.Detail(), want) {
			t.Errorf("detail does not contain %q:\n%s", want, blocked.Detail())
		}
	}
	if strings.Contains(blocked.Detail(), "finalizers are never removed") {
		t.Errorf("detail sends the user after finalizers:\n%s", blocked.Detail())
	}

	timedOut := namespaceStuckDiagnostic("review-x", &kube.NamespaceStuckError{
		Name: "review-x", Waited: 5 * time.Minute, Err: context.DeadlineExceeded,
		Blockers: []string{"NamespaceFinalizersRemaining: Some content in the namespace has finalizers remaining"},
	})
	if timedOut.Summary() != "Namespace Deletion Timed Out" || !strings.Contains(timedOut.Detail(), "finalizers are never removed") {
		t.Errorf("a namespace held by finalizers: %s\n%s", timedOut.Summary(), timedOut.Detail())
	}
}
