package helmrelease

import (
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
)

// State is where a release stands, as far as its next apply is concerned.
type State string

const (
	// StateAbsent: no revision, or only a history kept by an uninstall.
	StateAbsent State = "absent"
	// StateDeployed: the newest revision is deployed (or superseded, which Helm upgrades the same way).
	StateDeployed State = "deployed"
	// StateFailed: the newest revision failed; Helm upgrades it like a deployed one.
	StateFailed State = "failed"
	// StatePendingInstall: an install or uninstall was interrupted; nothing of it is trusted.
	StatePendingInstall State = "pending-install"
	// StatePendingUpgrade: an upgrade or rollback was interrupted.
	StatePendingUpgrade State = "pending-upgrade"
)

// Operation is the Helm action that brings a release to the planned revision.
type Operation string

const (
	OperationInstall Operation = "install"
	OperationUpgrade Operation = "upgrade"
)

// Recovery is what is done to a release left pending before the operation runs.
type Recovery string

const (
	// RecoveryNone: the release is not pending.
	RecoveryNone Recovery = ""
	// RecoveryUninstall removes a pending install (or uninstall) entirely; the install starts afresh.
	RecoveryUninstall Recovery = "uninstall"
	// RecoveryRollback marks the interrupted revision failed and rolls back to the newest
	// successful one, which writes a revision of its own; the upgrade follows.
	RecoveryRollback Recovery = "rollback"
	// RecoveryMarkFailed marks the interrupted revision failed; with no successful revision
	// to roll back to, the upgrade follows directly.
	RecoveryMarkFailed Recovery = "mark-failed"
)

// Target is the revision an operation renders and records: .Release.Revision and
// .Release.IsUpgrade.
type Target struct {
	Revision  int
	IsUpgrade bool
}

// Revision is one stored revision of a release: all the decision reads of it.
type Revision struct {
	Version int
	Status  rcommon.Status
}

// Next is the one decision about a release's next apply: the plan renders Target, and Apply
// carries out Recovery and Operation, which write exactly Target.Revision.
type Next struct {
	State State
	// Last is the newest stored revision, the zero Revision when there is none.
	Last Revision
	// Recovery is what is done first; RollbackTo is the revision RecoveryRollback returns to.
	Recovery   Recovery
	RollbackTo int
	Operation  Operation
	// Replace installs over a history an uninstall kept, as `helm install --replace`.
	Replace bool
	Target  Target
	// UpgradesFrom is the revision whose manifest an upgrade compares its rendering with, as
	// Helm's upgrade picks it: the objects not in it are the ones the upgrade creates, and the
	// only ones whose ownership Helm checks. 0 for an install, which creates every object.
	UpgradesFrom int
	// Adopt says the upgrade takes over Last, a deployed revision that the state does not
	// record (Claim.TakeOwnership).
	Adopt bool
	// Refused says nothing is applied: Last is deployed, the state does not record it, and
	// taking it over is not allowed.
	Refused bool
}

// Claim is what the configuration holds of a release besides its history.
type Claim struct {
	// Recorded says the state records the release.
	Recorded bool
	// TakeOwnership allows taking over a deployed release that the state does not record.
	TakeOwnership bool
}

// Decide returns the next apply of a release whose stored revisions are history (any order)
// and which claim claims. A deployed release that the state does not record is taken over
// (Adopt) or refused (Refused); a failed one is continued, as after a create that failed.
func Decide(history []Revision, claim Claim) Next {
	var last Revision
	for _, r := range history {
		if r.Version > last.Version {
			last = r
		}
	}
	next := Next{Last: last, State: stateOf(last)}
	if next.State == StateDeployed && !claim.Recorded {
		next.Adopt, next.Refused = claim.TakeOwnership, !claim.TakeOwnership
	}
	switch next.State {
	case StateAbsent:
		// Helm's install renders revision 1 even when it replaces a kept history.
		next.Operation, next.Replace, next.Target = OperationInstall, last.Version > 0, Target{Revision: 1}
	case StatePendingInstall:
		next.Recovery, next.Operation, next.Target = RecoveryUninstall, OperationInstall, Target{Revision: 1}
	case StatePendingUpgrade:
		next.Operation = OperationUpgrade
		if ok := newestSuccessful(history, last.Version); ok > 0 {
			// The rollback writes last+1, the upgrade last+2.
			// The rollback's revision records the manifest of the one it returns to.
			next.Recovery, next.RollbackTo, next.UpgradesFrom = RecoveryRollback, ok, ok
			next.Target = Target{Revision: last.Version + 2, IsUpgrade: true}
		} else {
			next.Recovery, next.Target = RecoveryMarkFailed, Target{Revision: last.Version + 1, IsUpgrade: true}
			next.UpgradesFrom = upgradesFrom(history, last)
		}
	default:
		next.Operation, next.Target = OperationUpgrade, Target{Revision: last.Version + 1, IsUpgrade: true}
		next.UpgradesFrom = upgradesFrom(history, last)
	}
	return next
}

// upgradesFrom returns the revision Helm's upgrade compares the rendering with (action's
// Upgrade.prepareUpgrade): last when it is deployed, else the newest deployed one, else last,
// as after a failed install or a revision marked failed.
func upgradesFrom(history []Revision, last Revision) int {
	if last.Status == rcommon.StatusDeployed {
		return last.Version
	}
	deployed := 0
	for _, r := range history {
		if r.Status == rcommon.StatusDeployed && r.Version > deployed {
			deployed = r.Version
		}
	}
	if deployed == 0 {
		return last.Version
	}
	return deployed
}

// DecideFromLast decides from the newest revision alone, when the history cannot be read (a
// plan without the cluster). An earlier revision is taken to have been deployed, as it is
// whenever an upgrade was interrupted; if that is wrong, the apply, which decides from the
// history, renders another revision and refuses to apply what the plan did not show.
func DecideFromLast(last Revision) Next {
	history := []Revision{last}
	if last.Version > 1 {
		history = append(history, Revision{Version: last.Version - 1, Status: rcommon.StatusSuperseded})
	}
	return Decide(history, Claim{Recorded: true})
}

func stateOf(last Revision) State {
	switch last.Status {
	case "", rcommon.StatusUnknown, rcommon.StatusUninstalled:
		return StateAbsent
	case rcommon.StatusDeployed, rcommon.StatusSuperseded:
		return StateDeployed
	case rcommon.StatusPendingInstall, rcommon.StatusUninstalling:
		return StatePendingInstall
	case rcommon.StatusPendingUpgrade, rcommon.StatusPendingRollback:
		return StatePendingUpgrade
	default:
		return StateFailed
	}
}

// newestSuccessful returns the newest deployed or superseded version older than before, or 0.
func newestSuccessful(history []Revision, before int) int {
	best := 0
	for _, r := range history {
		if (r.Status == rcommon.StatusDeployed || r.Status == rcommon.StatusSuperseded) && r.Version < before && r.Version > best {
			best = r.Version
		}
	}
	return best
}

func revisionsOf(history []*release.Release) []Revision {
	out := make([]Revision, 0, len(history))
	for _, r := range history {
		out = append(out, revisionOf(r))
	}
	return out
}

// revisionOf returns the version and status of rel, the zero Revision for nil.
func revisionOf(rel *release.Release) Revision {
	if rel == nil {
		return Revision{}
	}
	rev := Revision{Version: rel.Version}
	if rel.Info != nil {
		rev.Status = rel.Info.Status
	}
	return rev
}
