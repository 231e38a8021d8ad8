package helmrelease

import (
	"errors"
	"fmt"
	"testing"
)

// Helm's refusal to adopt an object without the release's ownership metadata is typed, through
// the wrapping Helm adds; other errors are left as they are.
func TestClassifyOperation_ownershipConflict(t *testing.T) {
	helm := fmt.Errorf("unable to continue with install: %w", errors.New(`ConfigMap "web" in namespace "review-1" exists and cannot be imported `+
		`into the current release: invalid ownership metadata; label validation error: missing key "app.kubernetes.io/managed-by"`))
	var owned *OwnershipError
	if err := classifyOperation(helm); !errors.As(err, &owned) || err.Error() != helm.Error() {
		t.Errorf("classifyOperation(%v) = %#v, want an OwnershipError with Helm's words", helm, err)
	}
	other := errors.New("context deadline exceeded")
	if err := classifyOperation(other); errors.As(err, &owned) || err != other {
		t.Errorf("classifyOperation(%v) = %#v, want it unchanged", other, err)
	}
	if err := classifyOperation(nil); err != nil {
		t.Errorf("classifyOperation(nil) = %v", err)
	}
}
