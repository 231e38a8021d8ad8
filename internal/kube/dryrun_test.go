package kube

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestDryRunError_tellsRBACFromAdmissionAndImmutableFields(t *testing.T) {
	deployments := schema.GroupResource{Group: "apps", Resource: "deployments"}
	mapping := &meta.RESTMapping{Resource: deployments.WithVersion("v1")}
	u := &unstructured.Unstructured{Object: map[string]any{"kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "review"}}}

	rbac := apierrors.NewForbidden(deployments, "web", errors.New(`User "ci-job" cannot patch resource "deployments" in API group "apps" in the namespace "review"`))
	if _, ok := AsForbidden(dryRunError(rbac, mapping, u)); !ok {
		t.Error("an RBAC refusal is not a ForbiddenError")
	}

	quota := apierrors.NewForbidden(deployments, "web", errors.New("exceeded quota: q, requested: pods=1"))
	var refused *RefusedError
	if err := dryRunError(quota, mapping, u); !errors.As(err, &refused) || refused.Immutable() {
		t.Errorf("a quota refusal = %#v, want a RefusedError that is not about immutable fields", err)
	}

	selector := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", field.ErrorList{
		field.Invalid(field.NewPath("spec", "selector"), "web-v2", "field is immutable"),
	})
	if err := dryRunError(selector, mapping, u); !errors.As(err, &refused) || !refused.Immutable() || refused.Causes[0].Field != "spec.selector" {
		t.Errorf("an immutable selector = %#v, want an immutable RefusedError naming spec.selector", err)
	}

	mixed := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", field.ErrorList{
		field.Invalid(field.NewPath("spec", "selector"), "web-v2", "field is immutable"),
		field.Required(field.NewPath("spec", "template", "spec", "containers"), ""),
	})
	if err := dryRunError(mixed, mapping, u); !errors.As(err, &refused) || refused.Immutable() {
		t.Errorf("a refusal that replacing would not cure = %#v, want it not Immutable", err)
	}

	denied := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden,
		Message: `admission webhook "deny.example.com" denied the request: images come from registry.example.com`}}
	if err := dryRunError(denied, mapping, u); !errors.As(err, &refused) || refused.Webhook != "deny.example.com" {
		t.Errorf("a webhook's refusal = %#v, want a RefusedError naming the webhook", err)
	}
	if err := dryRunError(quota, mapping, u); !errors.As(err, &refused) || refused.Webhook != "" {
		t.Errorf("a quota refusal names webhook %q", refused.Webhook)
	}

	sideEffects := apierrors.NewBadRequest(`admission webhook "audit.example.com" does not support dry run`)
	var unsupported *DryRunUnsupportedError
	if err := dryRunError(sideEffects, mapping, u); !errors.As(err, &unsupported) || unsupported.Webhook != "audit.example.com" {
		t.Errorf("a webhook with side effects = %#v, want a DryRunUnsupportedError naming it", err)
	}
}
