package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/environment"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
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
