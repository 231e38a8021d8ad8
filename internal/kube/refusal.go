package kube

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/refusal"
)

// RefusedError is the API server's (or an admission controller's) refusal of an object. The
// errors this package returns carry RBAC's refusal as a *ForbiddenError instead.
type RefusedError struct {
	// Class says who refused, and why.
	Class refusal.Class
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
func (e *RefusedError) Immutable() bool { return e.Class == refusal.Immutable }

// classifyRefusal reads an answer of the API server: a *RefusedError saying who refused and
// why (refusal.RBAC included, which callers turn into a *ForbiddenError naming the request), or
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
	answer := refusal.Status{Reason: reasonOf(err), Message: s.Message}
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			refused.Causes = append(refused.Causes, Cause{Field: c.Field, Message: c.Message, Immutable: refusal.IsImmutableMessage(c.Message)})
			answer.Causes = append(answer.Causes, refusal.Cause{Type: string(c.Type), Field: c.Field, Message: c.Message})
		}
	}
	if len(refused.Causes) == 0 && refusal.IsImmutableMessage(refused.Message) {
		refused.Causes = []Cause{{Message: refused.Message, Immutable: true}}
	}
	classified := refusal.Classify(answer)
	refused.Class, refused.Webhook, refused.Policy = classified.Class, classified.Webhook, classified.Policy
	return refused, true
}

// reasonOf is the status reason of err as apierrors reads it: the reason the API server named,
// else the one its code stands for.
func reasonOf(err error) string {
	switch {
	case apierrors.IsForbidden(err):
		return refusal.ReasonForbidden
	case apierrors.IsBadRequest(err):
		return refusal.ReasonBadRequest
	case apierrors.IsConflict(err):
		return refusal.ReasonConflict
	case apierrors.IsInvalid(err):
		return refusal.ReasonInvalid
	}
	return string(apierrors.ReasonForError(err))
}

// refusalOf wraps err, the API server's answer to verb on an object: a *ForbiddenError when RBAC
// refused it, a *RefusedError when anything else did, and err unchanged when it is no refusal.
func refusalOf(err error, verb, group, resource, namespace, name string) error {
	refused, ok := classifyRefusal(err)
	switch {
	case !ok:
		return err
	case refused.Class == refusal.RBAC:
		return &ForbiddenError{Verb: verb, Resource: resource, Group: group, Name: name, Namespace: namespace, Err: err}
	}
	return refused
}
