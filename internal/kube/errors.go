package kube

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ForbiddenError reports a request that RBAC refused: who may not do what to
// which object. Admission's 403 (webhooks, quota, Pod Security) is a *RefusedError. Callers add the identity (Clients.WhoAmI) to their message.
type ForbiddenError struct {
	// Verb is the API verb refused: get, create, patch, delete, ...
	Verb string
	// Resource and Group name the resource type, e.g. "namespaces" in the core group "".
	Resource string
	Group    string
	// Name and Namespace name the object; Namespace is empty for cluster-scoped objects.
	Name      string
	Namespace string
	// Err is the API server's answer.
	Err error
}

func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("%s %s: forbidden: %v", e.Verb, e.Object(), e.Err)
}

func (e *ForbiddenError) Unwrap() error { return e.Err }

// Object names the object the way kubectl names it: namespaces/review-x, or
// deployments.apps/web in namespace review-x.
func (e *ForbiddenError) Object() string {
	resource := e.Resource
	if e.Group != "" {
		resource += "." + e.Group
	}
	if e.Namespace == "" {
		return resource + "/" + e.Name
	}
	return fmt.Sprintf("%s/%s in namespace %s", resource, e.Name, e.Namespace)
}

// IsNotFound reports whether err says the object does not exist.
func IsNotFound(err error) bool {
	return apierrors.IsNotFound(err)
}

// AsForbidden returns the *ForbiddenError in err's chain, if any.
func AsForbidden(err error) (*ForbiddenError, bool) {
	var f *ForbiddenError
	ok := errors.As(err, &f)
	return f, ok
}
