package helmrelease

import (
	"errors"
	"testing"
)

// A failed operation's and a failed test's messages say how atomic undid the revision, from
// the typed Undo: the uninstall, the revision rolled back to, or why the undo failed.
func TestUndo_errorMessages(t *testing.T) {
	cause := errors.New("Deployment.apps/web: CrashLoopBackOff")
	failedUndo := errors.New("no earlier successful revision to roll back to")
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"install uninstalled", &OperationError{Operation: "install", Release: "r/web", Err: cause, Undo: Undo{Action: UndoUninstall}},
			"install of release r/web failed: " + cause.Error() + "; the release was uninstalled because atomic is set"},
		{"upgrade rolled back", &OperationError{Operation: "upgrade", Release: "r/web", Err: cause, Undo: Undo{Action: UndoRollback, Revision: 3}},
			"upgrade of release r/web failed: " + cause.Error() + "; the release was rolled back to revision 3 because atomic is set"},
		{"rollback failed", &OperationError{Operation: "upgrade", Release: "r/web", Err: cause, Undo: Undo{Action: UndoRollback, Err: failedUndo}},
			"upgrade of release r/web failed: " + cause.Error() + "; undoing it because atomic is set failed too: " + failedUndo.Error()},
		{"nothing undone", &OperationError{Operation: "upgrade", Release: "r/web", Err: cause},
			"upgrade of release r/web failed: " + cause.Error()},
		{"test rolled back", &TestError{Release: "r/web", Err: cause, Undo: Undo{Action: UndoRollback, Revision: 1}},
			"test of release r/web failed: " + cause.Error() + "; the release was rolled back to revision 1 because atomic is set"},
		{"test uninstall failed", &TestError{Release: "r/web", Err: cause, Undo: Undo{Action: UndoUninstall, Err: failedUndo}},
			"test of release r/web failed: " + cause.Error() + "; uninstalling it because atomic is set failed: " + failedUndo.Error()},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
