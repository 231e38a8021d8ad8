package kube

import (
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/refusal"
)

// The messages are the local cluster's (TestClassifyRefusal_theAPIServersAnswers logs them).
func TestClassifyRefusal_mapping(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		want    refusal.Class
		webhook string
		policy  string
	}{
		{"rbac", status(403, metav1.StatusReasonForbidden, `configmaps "rbac" is forbidden: User "gitlabk8s-test:nobody" cannot patch resource "configmaps" in API group "" in the namespace "review"`), refusal.RBAC, "", ""},
		{"rbac, a path", status(403, metav1.StatusReasonForbidden, `forbidden: User "gitlabk8s-test:nobody" cannot get path "/openapi/v3"`), refusal.RBAC, "", ""},
		{"pod security", status(403, metav1.StatusReasonForbidden, `pods "privileged" is forbidden: violates PodSecurity "restricted:latest": privileged (container "app" must not set securityContext.privileged=true)`), refusal.PodSecurity, "", ""},
		{"quota", status(403, metav1.StatusReasonForbidden, `services "web" is forbidden: exceeded quota: no-services, requested: services=1, used: services=0, limited: services=0`), refusal.Quota, "", ""},
		{"limit range", status(403, metav1.StatusReasonForbidden, `pods "web" is forbidden: maximum cpu usage per Container is 1, but limit is 2`), refusal.Admission, "", ""},
		{"webhook", status(403, metav1.StatusReasonForbidden, `admission webhook "deny.example.com" denied the request: images come from registry.example.com`), refusal.Webhook, "deny.example.com", ""},
		{"webhook with its own code", status(400, metav1.StatusReasonBadRequest, `admission webhook "validate.kyverno.svc" denied the request: label team is required`), refusal.Webhook, "validate.kyverno.svc", ""},
		{"webhook without dry run", status(400, metav1.StatusReasonBadRequest, `admission webhook "audit.example.com" does not support dry run`), refusal.DryRunUnsupported, "audit.example.com", ""},
		{"policy with 403", status(403, metav1.StatusReasonForbidden, `configmaps "refused" is forbidden: ValidatingAdmissionPolicy 'deny-refuse' with binding 'deny-refuse' denied request: configmaps may not hold the key refuse`,
			metav1.StatusCause{Message: `ValidatingAdmissionPolicy 'deny-refuse' with binding 'deny-refuse' denied request: configmaps may not hold the key refuse`}), refusal.Policy, "", "deny-refuse"},
		{"policy with 422", status(422, metav1.StatusReasonInvalid, `deployments.apps "web" is invalid: : ValidatingAdmissionPolicy 'images' with binding 'images' denied request: images come from registry.example.com`), refusal.Policy, "", "images"},
		{"namespace terminating", status(403, metav1.StatusReasonForbidden, `configmaps "late" is forbidden: unable to create new content in namespace review because it is being terminated`,
			metav1.StatusCause{Type: corev1.NamespaceTerminatingCause, Message: "namespace review is being terminated", Field: "metadata.namespace"}), refusal.NamespaceTerminating, "", ""},
		{"immutable", status(422, metav1.StatusReasonInvalid, "ConfigMap \"frozen\" is invalid: data: Forbidden: field is immutable when `immutable` is set",
			metav1.StatusCause{Type: metav1.CauseType("FieldValueForbidden"), Message: "Forbidden: field is immutable when `immutable` is set", Field: "data"}), refusal.Immutable, "", ""},
		{"statefulset spec", status(422, metav1.StatusReasonInvalid, `StatefulSet.apps "db" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas' are forbidden`,
			metav1.StatusCause{Type: metav1.CauseType("FieldValueForbidden"), Message: "Forbidden: updates to statefulset spec for fields other than 'replicas' are forbidden", Field: "spec"}), refusal.Immutable, "", ""},
		{"immutable and invalid", status(422, metav1.StatusReasonInvalid, `Deployment.apps "web" is invalid`,
			metav1.StatusCause{Message: "field is immutable", Field: "spec.selector"}, metav1.StatusCause{Message: "Required value", Field: "spec.template.spec.containers"}), refusal.Invalid, "", ""},
		{"invalid name", status(422, metav1.StatusReasonInvalid, `ConfigMap "Not_A_Name" is invalid: metadata.name: Invalid value: "Not_A_Name"`,
			metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid, Message: `Invalid value: "Not_A_Name"`, Field: "metadata.name"}), refusal.Invalid, "", ""},
		{"unknown field, server-side apply", status(500, "", `failed to create typed patch object (review/web; /v1, Kind=ConfigMap): .spec: field not declared in schema`), refusal.Invalid, "", ""},
		{"unknown field, strict decoding", status(400, metav1.StatusReasonBadRequest, `strict decoding error: unknown field "spec.size"`), refusal.Invalid, "", ""},
		{"conflict", status(409, metav1.StatusReasonConflict, `Operation cannot be fulfilled on configmaps "frozen": the object has been modified; please apply your changes to the latest version and try again`), refusal.Conflict, "", ""},
		{"webhook not reached", status(500, metav1.StatusReasonInternalError, `Internal error occurred: failed calling webhook "deny.example.com": connection refused`), refusal.Other, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refused, ok := classifyRefusal(fmt.Errorf("apply: %w", tc.err))
			if !ok {
				t.Fatalf("classifyRefusal(%v) is no refusal, want %q", tc.err, tc.want)
			}
			if refused.Class != tc.want || refused.Webhook != tc.webhook || refused.Policy != tc.policy {
				t.Errorf("class %q, webhook %q, policy %q; want %q, %q, %q", refused.Class, refused.Webhook, refused.Policy, tc.want, tc.webhook, tc.policy)
			}
			if refused.Immutable() != (tc.want == refusal.Immutable) {
				t.Errorf("Immutable() = %t for class %q", refused.Immutable(), refused.Class)
			}
		})
	}
}

func TestClassifyRefusal_whatRefusesNothing(t *testing.T) {
	configMaps := schema.GroupResource{Resource: "configmaps"}
	for _, err := range []error{
		nil,
		errors.New("connection refused"),
		apierrors.NewNotFound(configMaps, "web"),
		apierrors.NewUnauthorized("token expired"),
		apierrors.NewServerTimeout(configMaps, "patch", 1),
		apierrors.NewTimeoutError("the request timed out", 1),
	} {
		if refused, ok := classifyRefusal(err); ok {
			t.Errorf("classifyRefusal(%v) = %+v, want no refusal", err, refused)
		}
	}
}

// Only RBAC's refusal names the identity's missing right; admission's 403 keeps its own type.
func TestRefusal_onlyRBACIsForbidden(t *testing.T) {
	rbac := status(403, metav1.StatusReasonForbidden, `namespaces "review" is forbidden: User "ci" cannot delete resource "namespaces" in API group "" in the namespace "review"`)
	f, ok := AsForbidden(refusalOf(rbac, "delete", "", "namespaces", "", "review"))
	if !ok || f.Verb != "delete" || f.Object() != "namespaces/review" {
		t.Errorf("RBAC's refusal = %+v, want a ForbiddenError for delete on namespaces/review", f)
	}
	webhook := status(403, metav1.StatusReasonForbidden, `admission webhook "protect.example.com" denied the request: namespace review is protected`)
	err := refusalOf(webhook, "delete", "", "namespaces", "", "review")
	var refused *RefusedError
	if _, ok := AsForbidden(err); ok || !errors.As(err, &refused) || refused.Webhook != "protect.example.com" {
		t.Errorf("a webhook's 403 = %#v, want a RefusedError naming the webhook, not a ForbiddenError", err)
	}
	if !apierrors.IsForbidden(err) {
		t.Error("the RefusedError hides the API server's status from apierrors")
	}
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "review")
	if err := refusalOf(notFound, "get", "", "namespaces", "", "review"); err != notFound {
		t.Errorf("refusalOf(not found) = %v, want the error unchanged", err)
	}
}
