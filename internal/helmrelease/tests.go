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
	// Undo is what Atomic did about it.
	Undo Undo
}

func (e *TestError) Error() string {
	msg := fmt.Sprintf("test of release %s failed: %v", e.Release, e.Err)
	switch {
	case e.Undo.Err != nil && e.Undo.Action == UndoUninstall:
		msg += fmt.Sprintf("; uninstalling it because atomic is set failed: %v", e.Undo.Err)
	case e.Undo.Err != nil:
		msg += fmt.Sprintf("; rolling it back because atomic is set failed: %v", e.Undo.Err)
	case e.Undo.Done():
		msg += "; the release was " + e.Undo.past() + " because atomic is set"
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
		failed.Undo = Undo{Action: UndoUninstall, Err: c.uninstall(cfg, spec.Name, spec.Timeout, CascadeForeground, true)}
	} else {
		failed.Undo = Undo{Action: UndoRollback, Revision: previous, Err: c.rollback(cfg, spec, previous)}
	}
	return failed
}
