package helmrelease

import (
	"fmt"

	"helm.sh/helm/v4/pkg/action"
)

// TestError is a chart's test hook that failed after the release was applied (Spec.RunTests).
// Err names the hook, its pod and why, as the provider's waiter says it.
type TestError struct {
	Release string
	Err     error
	// Undone says what Atomic did about it, or is empty.
	Undone string
}

func (e *TestError) Error() string {
	msg := fmt.Sprintf("test of release %s failed: %v", e.Release, e.Err)
	if e.Undone != "" {
		msg += "; " + e.Undone
	}
	return msg
}

func (e *TestError) Unwrap() error { return e.Err }

// runTests runs the test hooks of the release's newest revision, as `helm test` does, through
// cfg's kube client, so the provider's waiter and its failure classes decide; Helm deletes the
// hooks as their hook-delete-policy says.
func (c *Client) runTests(cfg *action.Configuration, spec Spec) error {
	testing := action.NewReleaseTesting(cfg)
	testing.Timeout = spec.Timeout
	testing.Namespace = spec.Namespace
	_, shutdown, err := testing.Run(spec.Name)
	if shutdownErr := shutdown(); err == nil && shutdownErr != nil {
		err = fmt.Errorf("clean up the test hooks: %w", shutdownErr)
	}
	return err
}

// testsFailed undoes a revision whose tests failed when spec is atomic, as a failed operation
// is undone: an install is uninstalled, an upgrade rolled back to previous.
func (c *Client) testsFailed(cfg *action.Configuration, spec Spec, previous int, err error) error {
	failed := &TestError{Release: releaseID(spec), Err: err}
	if !spec.Atomic {
		return failed
	}
	if previous == 0 {
		if undoErr := c.uninstall(cfg, spec.Name, spec.Timeout, CascadeForeground, true); undoErr != nil {
			failed.Undone = fmt.Sprintf("uninstalling it because atomic is set failed: %v", undoErr)
		} else {
			failed.Undone = "the release was uninstalled because atomic is set"
		}
		return failed
	}
	if undoErr := c.rollback(cfg, spec, previous); undoErr != nil {
		failed.Undone = fmt.Sprintf("rolling it back because atomic is set failed: %v", undoErr)
	} else {
		failed.Undone = fmt.Sprintf("the release was rolled back to revision %d because atomic is set", previous)
	}
	return failed
}
