package refusal

import (
	"regexp"
	"strconv"
	"strings"
)

// Class says why the API server refused a request, as its answer tells it. RBAC, admission
// (webhooks, policies, Pod Security, quota) and a namespace being deleted all answer 403
// Forbidden; only the first means that the identity may not ask.
type Class string

const (
	// RBAC: the authorizer refused the identity the verb on the resource.
	RBAC Class = "RBAC"
	// Webhook: an admission webhook denied the object (Refusal.Webhook names it).
	Webhook Class = "admission webhook"
	// Policy: a ValidatingAdmissionPolicy denied the object (Refusal.Policy names it).
	Policy Class = "admission policy"
	// PodSecurity: Pod Security admission refused a pod the namespace's level forbids.
	PodSecurity Class = "Pod Security"
	// Quota: a ResourceQuota of the namespace has no room for the object.
	Quota Class = "quota"
	// Admission: another admission plugin refused the object (a LimitRange, ...).
	Admission Class = "admission"
	// NamespaceTerminating: the object's namespace is being deleted.
	NamespaceTerminating Class = "namespace terminating"
	// Immutable: only fields that may not change once set would change.
	Immutable Class = "immutable field"
	// Invalid: the object is invalid (a field's value, an unknown field).
	Invalid Class = "invalid"
	// Conflict: another writer changed the object, or owns the fields.
	Conflict Class = "conflict"
	// DryRunUnsupported: an admission webhook that declares side effects applies to the
	// object, so the API server refuses to dry-run it.
	DryRunUnsupported Class = "dry run unsupported"
	// Other: any other refusal, or one that may pass when asked again (a webhook that did not
	// answer, a ServiceAccount not created yet).
	Other Class = "refused"
)

// The API server's status reasons and the cause type the classification reads (metav1's).
const (
	ReasonForbidden           = "Forbidden"
	ReasonBadRequest          = "BadRequest"
	ReasonConflict            = "Conflict"
	ReasonInvalid             = "Invalid"
	CauseNamespaceTerminating = "NamespaceTerminating"
)

// Status is what the classification reads of an answer of the API server (a metav1.Status).
type Status struct {
	// Reason is the status reason as k8s.io/apimachinery's errors read it: the one the API
	// server named, else the one its code stands for (403 is Forbidden).
	Reason  string
	Message string
	Causes  []Cause
}

// Cause is one cause of a Status: a field refused, or why (Type).
type Cause struct {
	Type    string
	Field   string
	Message string
}

// Refusal is a classified refusal.
type Refusal struct {
	Class Class
	// Webhook is the name of the admission webhook that refused the object, and Policy that of
	// the ValidatingAdmissionPolicy; empty when neither did.
	Webhook string
	Policy  string
}

// Classify tells the refusals apart by the status and the wording of the API server and its
// admission plugins (k8s.io/apiserver's webhook and policy errors, Pod Security, ResourceQuota).
func Classify(s Status) Refusal {
	forbidden := s.Reason == ReasonForbidden
	if forbidden && isAuthorizationMessage(s.Message) {
		return Refusal{Class: RBAC}
	}
	if webhook, ok := webhookNamed(s.Message, webhookNoDryRun); ok && s.Reason == ReasonBadRequest {
		return Refusal{Class: DryRunUnsupported, Webhook: webhook}
	}
	if r, ok := admissionRefusal(s.Message); ok {
		return r
	}
	switch {
	case s.hasCause(CauseNamespaceTerminating):
		return Refusal{Class: NamespaceTerminating}
	case strings.Contains(s.Message, podSecurityRefused):
		return Refusal{Class: PodSecurity}
	case forbidden && strings.Contains(s.Message, quotaExceeded):
		return Refusal{Class: Quota}
	case forbidden:
		return Refusal{Class: Admission}
	case s.Reason == ReasonConflict:
		return Refusal{Class: Conflict}
	case s.allImmutable():
		return Refusal{Class: Immutable}
	case s.Reason == ReasonInvalid, isUnknownFieldMessage(s.Message):
		return Refusal{Class: Invalid}
	}
	return Refusal{Class: Other}
}

// ClassifyCreate reads the message of a workload controller that could not create a pod (a
// FailedCreate event or ReplicaFailure condition), which quotes the API server's refusal
// without its status: Quota, Webhook, Policy, PodSecurity or Admission when admission refused
// the pod, Other when the refusal may pass on a retry (a webhook that did not answer, a
// ServiceAccount not created yet) or is none of those.
func ClassifyCreate(message string) Refusal {
	if strings.Contains(message, quotaExceeded) {
		return Refusal{Class: Quota}
	}
	if r, ok := admissionRefusal(message); ok {
		return r
	}
	switch {
	case strings.Contains(message, podSecurityRefused):
		return Refusal{Class: PodSecurity}
	case strings.Contains(message, "is forbidden") && !strings.Contains(message, serviceAccountLookupFailed) &&
		!strings.Contains(message, webhookNotCalled):
		return Refusal{Class: Admission}
	}
	return Refusal{Class: Other}
}

// admissionRefusal recognises a webhook's or a ValidatingAdmissionPolicy's denial.
func admissionRefusal(message string) (Refusal, bool) {
	if webhook, ok := webhookNamed(message, webhookDenied); ok {
		return Refusal{Class: Webhook, Webhook: webhook}, true
	}
	if m := policyMessage.FindStringSubmatch(message); m != nil {
		return Refusal{Class: Policy, Policy: m[1]}, true
	}
	return Refusal{}, false
}

// IsImmutableMessage recognises the API server's wording for a change it allows only on
// create: "field is immutable" (Deployment selector, Job template, most fields), "may not
// change once set" (Service clusterIP), and StatefulSet's list of the spec fields an update may
// touch (volumeClaimTemplates, selector, serviceName).
func IsImmutableMessage(msg string) bool {
	return strings.Contains(msg, "field is immutable") ||
		strings.Contains(msg, "may not change once set") ||
		strings.Contains(msg, "updates to statefulset spec for fields other than")
}

// PodSecurityViolation reads a warning of the API server about a workload whose pods would
// violate a Pod Security level: `would violate PodSecurity "restricted:latest": ...` gives
// "restricted". Pod Security warns, rather than refuses, about workloads.
func PodSecurityViolation(warning string) (level string, ok bool) {
	m := podSecurityWarning.FindStringSubmatch(warning)
	if m == nil {
		return "", false
	}
	return m[1], true
}

func (s Status) hasCause(causeType string) bool {
	for _, c := range s.Causes {
		if c.Type == causeType {
			return true
		}
	}
	return false
}

// allImmutable reports whether the status names causes and every one is an immutable field;
// a status without causes counts when its message says so.
func (s Status) allImmutable() bool {
	if len(s.Causes) == 0 {
		return IsImmutableMessage(s.Message)
	}
	for _, c := range s.Causes {
		if !IsImmutableMessage(c.Message) {
			return false
		}
	}
	return true
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

// The wording of admission's refusals: a webhook's and a dry run it could not send to a
// webhook (k8s.io/apiserver's admission webhook errors), Pod Security's and ResourceQuota's.
const (
	webhookDenied      = "denied the request"
	webhookNoDryRun    = "does not support dry run"
	podSecurityRefused = "violates PodSecurity"
	quotaExceeded      = "exceeded quota"
	// What a controller's FailedCreate says when a retry may pass: the ServiceAccount
	// admission found no ServiceAccount yet, or a webhook did not answer.
	serviceAccountLookupFailed = "error looking up service account"
	webhookNotCalled           = "failed calling webhook"
)

var webhookMessage = regexp.MustCompile(`admission webhook ("(?:[^"\\]|\\.)*") (` + webhookDenied + `|` + webhookNoDryRun + `)`)

// policyMessage is the API server's wording for a ValidatingAdmissionPolicy's refusal.
var policyMessage = regexp.MustCompile(`ValidatingAdmissionPolicy '([^']*)' with binding '[^']*' denied request`)

// podSecurityWarning is Pod Security's warning about a workload: `would violate PodSecurity
// "<level>:<version>": ...`.
var podSecurityWarning = regexp.MustCompile(`would violate PodSecurity "([^":]+):[^"]*"`)

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
