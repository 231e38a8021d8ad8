package helmrelease

import "strings"

// OwnershipError is Helm's refusal to install or upgrade over an object that exists without
// the release's ownership metadata: created with kubectl or another tool, or another release's.
// Helm words it only as text (action's existingResourceConflict); this is the one place that
// reads that text.
type OwnershipError struct {
	Err error
}

func (e *OwnershipError) Error() string { return e.Err.Error() }

func (e *OwnershipError) Unwrap() error { return e.Err }

// helmOwnershipConflict is how Helm 4's action package says an object cannot be adopted.
const helmOwnershipConflict = "exists and cannot be imported into the current release"

// classifyOperation returns Helm's error of an install or upgrade, typed where the provider
// tells the user something particular about it.
func classifyOperation(err error) error {
	if err != nil && strings.Contains(err.Error(), helmOwnershipConflict) {
		return &OwnershipError{Err: err}
	}
	return err
}
