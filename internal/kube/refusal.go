package kube

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RefusalClass says why the API server refused a request, as its answer tells it. RBAC,
// admission (webhooks, policies, Pod Security, quota) and a namespace being deleted all answer
// 403 Forbidden; only the first means that the identity may not ask.
type RefusalClass string

const (
	// RefusalRBAC: the authorizer refused the identity the verb on the resource.
	RefusalRBAC RefusalClass = "RBAC"
	// RefusalWebhook: an admission webhook denied the object (RefusedError.Webhook names it).
	RefusalWebhook RefusalClass = "admission webhook"
	// RefusalPolicy: a ValidatingAdmissionPolicy denied the object (RefusedError.Policy names it).
	RefusalPolicy RefusalClass = "admission policy"
	// RefusalPodSecurity: Pod Security admission refused a pod the namespace's level forbids.
	RefusalPodSecurity RefusalClass = "Pod Security"
	// RefusalQuota: a ResourceQuota of the namespace has no room for the object.
	RefusalQuota RefusalClass = "quota"
	// RefusalAdmission: another admission plugin refused the object (a LimitRange, ...).
	RefusalAdmission RefusalClass = "admission"
	// RefusalNamespaceTerminating: the object's namespace is being deleted.
	RefusalNamespaceTerminating RefusalClass = "namespace terminating"
	// RefusalImmutable: only fields that may not change once set would change.
	RefusalImmutable RefusalClass = "immutable field"
	// RefusalInvalid: the object is invalid (a field's value, an unknown field).
	RefusalInvalid RefusalClass = "invalid"
	// RefusalConflict: another writer changed the object, or owns the fields.
	RefusalConflict RefusalClass = "conflict"
	// RefusalDryRunUnsupported: an admission webhook that declares side effects applies to the
	// object, so the API server refuses to dry-run it.
	RefusalDryRunUnsupported RefusalClass = "dry run unsupported"
	// RefusalOther: any other refusal; RefusedError.Reason is the API server's reason.
	RefusalOther RefusalClass = "refused"
)

// RefusedError is the API server's (or an admission controller's) refusal of an object. The
// errors this package returns carry RBAC's refusal as a *ForbiddenError instead.
type RefusedError struct {
	// Class says who refused, and why.
	Class RefusalClass
	// Reason is the status reason: Invalid, Forbidden (admission), Conflict, ...
	Reason string
	// Message is the API server's message.
	Message string
	// Causes are the fields refused, when the API server names them.
	Causes []Cause
	// Webhook is the name of the admission webhook that refused the object, and Policy that of
	// the ValidatingAdmissionPolicy; empty when neither did.
	Webhook string
	Policy  string
	Err     error
}

// Cause is one field the API server refused.
type Cause struct {
	Field   string
	Message string
	// Immutable is set when the field may not change once set.
	Immutable bool
}

func (e *RefusedError) Error() string { return e.Message }

func (e *RefusedError) Unwrap() error { return e.Err }

// Immutable reports whether the API server refused the object only because fields that may
// not change once set would change: deleting and recreating the object would be accepted.
func (e *RefusedError) Immutable() bool { return e.Class == RefusalImmutable }

// classifyRefusal reads an answer of the API server: a *RefusedError saying who refused and
// why (RefusalRBAC included, which callers turn into a *ForbiddenError naming the request), or
// false for what refuses nothing: an error that is not the API server's status, an object that
// does not exist, credentials it does not accept, a timeout.
func classifyRefusal(err error) (*RefusedError, bool) {
	var status apierrors.APIStatus
	if err == nil || !errors.As(err, &status) || apierrors.IsNotFound(err) || apierrors.IsUnauthorized(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) {
		return nil, false
	}
	s := status.Status()
	refused := &RefusedError{Reason: string(s.Reason), Message: s.Message, Err: err}
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			refused.Causes = append(refused.Causes, Cause{Field: c.Field, Message: c.Message, Immutable: isImmutableMessage(c.Message)})
		}
	}
	if len(refused.Causes) == 0 && isImmutableMessage(refused.Message) {
		refused.Causes = []Cause{{Message: refused.Message, Immutable: true}}
	}
	refused.Class = refusalClass(err, s, refused)
	return refused, true
}

// refusal wraps err, the API server's answer to verb on an object: a *ForbiddenError when RBAC
// refused it, a *RefusedError when anything else did, and err unchanged when it is no refusal.
func refusal(err error, verb, group, resource, namespace, name string) error {
	refused, ok := classifyRefusal(err)
	switch {
	case !ok:
		return err
	case refused.Class == RefusalRBAC:
		return &ForbiddenError{Verb: verb, Resource: resource, Group: group, Name: name, Namespace: namespace, Err: err}
	}
	return refused
}

// refusalClass tells the refusals apart by the status and the wording of the API server and its
// admission plugins (k8s.io/apiserver's webhook and policy errors, Pod Security, ResourceQuota).
func refusalClass(err error, s metav1.Status, refused *RefusedError) RefusalClass {
	if apierrors.IsForbidden(err) && isAuthorizationMessage(s.Message) {
		return RefusalRBAC
	}
	if webhook, ok := webhookNamed(s.Message, webhookNoDryRun); ok && apierrors.IsBadRequest(err) {
		refused.Webhook = webhook
		return RefusalDryRunUnsupported
	}
	if webhook, ok := webhookNamed(s.Message, webhookDenied); ok {
		refused.Webhook = webhook
		return RefusalWebhook
	}
	if m := policyMessage.FindStringSubmatch(s.Message); m != nil {
		refused.Policy = m[1]
		return RefusalPolicy
	}
	switch {
	case hasCause(s, corev1.NamespaceTerminatingCause):
		return RefusalNamespaceTerminating
	case strings.Contains(s.Message, "violates PodSecurity"):
		return RefusalPodSecurity
	case apierrors.IsForbidden(err) && strings.Contains(s.Message, "exceeded quota"):
		return RefusalQuota
	case apierrors.IsForbidden(err):
		return RefusalAdmission
	case apierrors.IsConflict(err):
		return RefusalConflict
	case len(refused.Causes) > 0 && allImmutable(refused.Causes):
		return RefusalImmutable
	case apierrors.IsInvalid(err), isUnknownFieldMessage(s.Message):
		return RefusalInvalid
	}
	return RefusalOther
}

func hasCause(s metav1.Status, cause metav1.CauseType) bool {
	if s.Details == nil {
		return false
	}
	for _, c := range s.Details.Causes {
		if c.Type == cause {
			return true
		}
	}
	return false
}

func allImmutable(causes []Cause) bool {
	for _, c := range causes {
		if !c.Immutable {
			return false
		}
	}
	return true
}

// isImmutableMessage recognises the API server's wording for a change it allows only on
// create: "field is immutable" (Deployment selector, Job template, most fields), "may not
// change once set" (Service clusterIP), and StatefulSet's list of the spec fields an update may
// touch (volumeClaimTemplates, selector, serviceName).
func isImmutableMessage(msg string) bool {
	return strings.Contains(msg, "field is immutable") ||
		strings.Contains(msg, "may not change once set") ||
		strings.Contains(msg, "updates to statefulset spec for fields other than")
}

// isUnknownFieldMessage recognises strict field validation's refusal of a field the schema does
// not declare: server-side apply answers it with a status of code 500 and no reason, other
// requests with 400 and "strict decoding error".
func isUnknownFieldMessage(msg string) bool {
	return strings.Contains(msg, "field not declared in schema") || strings.Contains(msg, "strict decoding error")
}

// isAuthorizationMessage recognises the authorizer's refusal: `User "ci-job" cannot patch
// resource "clusterroles" in API group ...`, and for a path that is no resource `User "ci-job"
// cannot get path "/openapi/v3"`.
func isAuthorizationMessage(msg string) bool {
	return strings.Contains(msg, " cannot ") && (strings.Contains(msg, ` resource "`) || strings.Contains(msg, ` path "`))
}

// The API server's wording for a webhook's refusal and for a dry run it could not send to a
// webhook (k8s.io/apiserver's admission webhook errors).
const (
	webhookDenied   = "denied the request"
	webhookNoDryRun = "does not support dry run"
)

var webhookMessage = regexp.MustCompile(`admission webhook ("(?:[^"\\]|\\.)*") (` + webhookDenied + `|` + webhookNoDryRun + `)`)

// policyMessage is the API server's wording for a ValidatingAdmissionPolicy's refusal.
var policyMessage = regexp.MustCompile(`ValidatingAdmissionPolicy '([^']*)' with binding '[^']*' denied request`)

// webhookNamed returns the webhook a message of the API server names as having done what.
func webhookNamed(message, what string) (string, bool) {
	for _, m := range webhookMessage.FindAllStringSubmatch(message, -1) {
		if m[2] != what {
			continue
		}
		if name, err := strconv.Unquote(m[1]); err == nil {
			return name, true
		}
	}
	return "", false
}
