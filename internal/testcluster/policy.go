package testcluster

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// DenyPolicy is a ValidatingAdmissionPolicy, checked in the API server itself (no webhook to
// serve), that refuses the objects of Rule that Expression rejects, bound with the Deny action
// to what Match selects: a test's own namespace or objects, so no other test meets it.
type DenyPolicy struct {
	Name       string
	Rule       admissionregistrationv1.Rule
	Expression string
	Message    string
	// Reason is the status of the refusal; nil means the API server's default, Invalid (422).
	Reason *metav1.StatusReason
	Match  *admissionregistrationv1.MatchResources
}

// Create creates the policy and its binding, and returns what deletes both. The API server
// enforces a new policy a moment later: wait for a refusal before relying on it.
func (p DenyPolicy) Create(ctx context.Context, kc kubernetes.Interface) (remove func(), err error) {
	fail := admissionregistrationv1.Fail
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       p.Rule,
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: p.Expression, Message: p.Message, Reason: p.Reason}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        p.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources:    p.Match,
		},
	}
	policies := kc.AdmissionregistrationV1()
	if _, err := policies.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create ValidatingAdmissionPolicy %s: %w", p.Name, err)
	}
	remove = func() {
		_ = policies.ValidatingAdmissionPolicyBindings().Delete(context.Background(), p.Name, metav1.DeleteOptions{})
		_ = policies.ValidatingAdmissionPolicies().Delete(context.Background(), p.Name, metav1.DeleteOptions{})
	}
	if _, err := policies.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		remove()
		return nil, fmt.Errorf("create ValidatingAdmissionPolicyBinding %s: %w", p.Name, err)
	}
	return remove, nil
}
