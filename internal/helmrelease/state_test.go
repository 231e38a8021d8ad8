package helmrelease

import (
	"slices"
	"testing"

	rcommon "helm.sh/helm/v4/pkg/release/common"
)

func history(statuses ...rcommon.Status) []Revision {
	out := make([]Revision, len(statuses))
	for i, s := range statuses {
		out[i] = Revision{Version: i + 1, Status: s}
	}
	return out
}

// The statuses the histories of these tests are written with.
const (
	deployed       = rcommon.StatusDeployed
	superseded     = rcommon.StatusSuperseded
	failed         = rcommon.StatusFailed
	pendingInstall = rcommon.StatusPendingInstall
	pendingUpgrade = rcommon.StatusPendingUpgrade
	uninstalled    = rcommon.StatusUninstalled
)

func TestDecide(t *testing.T) {
	tests := []struct {
		name    string
		history []Revision
		// unrecorded: the state does not record the release.
		unrecorded, takeOwnership bool
		want                      Next
	}{
		{name: "none", want: Next{State: StateAbsent, Operation: OperationInstall, Target: Target{Revision: 1}}},
		{
			name:    "deployed",
			history: history(superseded, superseded, deployed),
			want:    Next{State: StateDeployed, Last: Revision{3, deployed}, Operation: OperationUpgrade, Target: Target{Revision: 4, IsUpgrade: true}, UpgradesFrom: 3},
		},
		{
			name:    "failed install",
			history: history(failed),
			want:    Next{State: StateFailed, Last: Revision{1, failed}, Operation: OperationUpgrade, Target: Target{Revision: 2, IsUpgrade: true}, UpgradesFrom: 1},
		},
		{
			// Helm upgrades a failed upgrade from the newest deployed revision.
			name:    "failed upgrade",
			history: history(superseded, deployed, failed),
			want:    Next{State: StateFailed, Last: Revision{3, failed}, Operation: OperationUpgrade, Target: Target{Revision: 4, IsUpgrade: true}, UpgradesFrom: 2},
		},
		{
			// Without a deployed revision Helm upgrades from the newest, a superseded one not counting.
			name:    "failed upgrade after a superseded revision",
			history: history(superseded, failed),
			want:    Next{State: StateFailed, Last: Revision{2, failed}, Operation: OperationUpgrade, Target: Target{Revision: 3, IsUpgrade: true}, UpgradesFrom: 2},
		},
		{
			// Install replaces a kept history but renders revision 1, as Helm's install does.
			name:    "uninstalled with history kept",
			history: history(superseded, rcommon.StatusUninstalled),
			want:    Next{State: StateAbsent, Last: Revision{2, rcommon.StatusUninstalled}, Operation: OperationInstall, Replace: true, Target: Target{Revision: 1}},
		},
		{
			name:    "pending install",
			history: history(pendingInstall),
			want:    Next{State: StatePendingInstall, Last: Revision{1, pendingInstall}, Recovery: RecoveryUninstall, Operation: OperationInstall, Target: Target{Revision: 1}},
		},
		{
			name:    "uninstalling",
			history: history(superseded, rcommon.StatusUninstalling),
			want:    Next{State: StatePendingInstall, Last: Revision{2, rcommon.StatusUninstalling}, Recovery: RecoveryUninstall, Operation: OperationInstall, Target: Target{Revision: 1}},
		},
		{
			// The rollback to 2 writes revision 4; the upgrade writes 5.
			name:    "pending upgrade",
			history: history(superseded, deployed, pendingUpgrade),
			want: Next{State: StatePendingUpgrade, Last: Revision{3, pendingUpgrade}, Recovery: RecoveryRollback, RollbackTo: 2,
				Operation: OperationUpgrade, Target: Target{Revision: 5, IsUpgrade: true}, UpgradesFrom: 2},
		},
		{
			name:    "pending rollback rolls back to the newest successful before it",
			history: history(superseded, failed, rcommon.StatusPendingRollback),
			want: Next{State: StatePendingUpgrade, Last: Revision{3, rcommon.StatusPendingRollback}, Recovery: RecoveryRollback, RollbackTo: 1,
				Operation: OperationUpgrade, Target: Target{Revision: 5, IsUpgrade: true}, UpgradesFrom: 1},
		},
		{
			name:    "pending upgrade with nothing to roll back to",
			history: history(failed, pendingUpgrade),
			want: Next{State: StatePendingUpgrade, Last: Revision{2, pendingUpgrade}, Recovery: RecoveryMarkFailed,
				Operation: OperationUpgrade, Target: Target{Revision: 3, IsUpgrade: true}, UpgradesFrom: 2},
		},
		{
			name:    "deployed but not in the state",
			history: history(superseded, deployed), unrecorded: true,
			want: Next{State: StateDeployed, Last: Revision{2, deployed}, Operation: OperationUpgrade, Target: Target{Revision: 3, IsUpgrade: true},
				UpgradesFrom: 2, Refused: true},
		},
		{
			name:    "deployed but not in the state, taken over",
			history: history(superseded, deployed), unrecorded: true, takeOwnership: true,
			want: Next{State: StateDeployed, Last: Revision{2, deployed}, Operation: OperationUpgrade, Target: Target{Revision: 3, IsUpgrade: true},
				UpgradesFrom: 2, Adopt: true},
		},
		{
			// A create that failed left it: the apply continues it, taking over or not.
			name:    "failed and not in the state",
			history: history(failed), unrecorded: true,
			want: Next{State: StateFailed, Last: Revision{1, failed}, Operation: OperationUpgrade, Target: Target{Revision: 2, IsUpgrade: true}, UpgradesFrom: 1},
		},
		{
			name: "none, taking over", unrecorded: true, takeOwnership: true,
			want: Next{State: StateAbsent, Operation: OperationInstall, Target: Target{Revision: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Helm's storage returns revisions in no particular order.
			reversed := make([]Revision, 0, len(tt.history))
			for i := len(tt.history) - 1; i >= 0; i-- {
				reversed = append(reversed, tt.history[i])
			}
			if got := Decide(reversed, Claim{Recorded: !tt.unrecorded, TakeOwnership: tt.takeOwnership}); got != tt.want {
				t.Errorf("Decide = %+v\nwant     %+v", got, tt.want)
			}
		})
	}
}

func TestDecideFromLast(t *testing.T) {
	// Without the history, a pending upgrade is taken to have a deployed revision before it.
	got := DecideFromLast(Revision{Version: 2, Status: rcommon.StatusPendingUpgrade})
	if got.Recovery != RecoveryRollback || got.RollbackTo != 1 || got.Target != (Target{Revision: 4, IsUpgrade: true}) {
		t.Errorf("DecideFromLast(2 pending-upgrade) = %+v, want a rollback to 1 and revision 4", got)
	}
	if got := DecideFromLast(Revision{}); got.Operation != OperationInstall || got.Target != (Target{Revision: 1}) {
		t.Errorf("DecideFromLast(none) = %+v, want an install of revision 1", got)
	}
}

// A plan reads whole the newest record, and the one its next apply compares with or rolls back
// to; every other revision is read for its version and status alone.
func TestWanted(t *testing.T) {
	tests := []struct {
		name    string
		history []Revision
		want    []int
	}{
		{"none", nil, nil},
		{"newest deployed", history(superseded, superseded, superseded, deployed), []int{4}},
		{"newest failed over a deployed one", history(superseded, deployed, failed), []int{2, 3}},
		{"newest failed over a failed install", history(failed, failed), []int{2}},
		{"pending over a deployed one", history(superseded, deployed, pendingUpgrade), []int{2, 3}},
		{"pending over superseded ones", history(superseded, superseded, pendingUpgrade), []int{2, 3}},
		{"uninstalled, history kept", history(superseded, uninstalled), []int{2}},
		{"any order", []Revision{{3, deployed}, {1, superseded}, {2, superseded}}, []int{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Wanted(tt.history); !slices.Equal(got, tt.want) {
				t.Errorf("Wanted(%v) = %v, want %v", tt.history, got, tt.want)
			}
		})
	}
}
