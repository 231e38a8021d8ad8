package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	helmkube "helm.sh/helm/v4/pkg/kube"
	"helm.sh/helm/v4/pkg/postrenderer"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
)

// Spec is the desired state of a release.
type Spec struct {
	Name      string
	Namespace string
	Chart     *helmchart.Chart
	Values    map[string]any
	// Capabilities are those the plan rendered with; nil lets Helm discover the cluster's.
	Capabilities *common.Capabilities
	// Atomic undoes a failed operation: a failed upgrade is rolled back to the last
	// successful revision, a failed install is uninstalled.
	Atomic bool
	// Wait waits until every object is ready (and every Job complete).
	Wait        bool
	Timeout     time.Duration
	MaxHistory  int
	Description string
	// Labels are the revision's release labels (helm list --selector); a key with an empty
	// value is left out, and removed from what the previous revision carried.
	Labels map[string]string
	// RecoverPending recovers a release left pending by an interrupted run before operating.
	RecoverPending bool
	// PostRenderer sees the manifests Helm rendered before anything is written, see PlanCheck.
	PostRenderer postrenderer.PostRenderer
	// LeaveToOthers, when set, returns what an upgrade or rollback applies of the objects
	// that exist: desired are all of them as Helm rendered them, previous each one as the
	// revision Helm moves from recorded it (nil for an object new in this revision), live the
	// live version of each. It leaves out fields that others own, the plan does not count as
	// drift and the user did not change, which the forced apply would otherwise take back.
	// Helm still records desired.
	LeaveToOthers func(desired, previous, live []map[string]any) []map[string]any
	// RunTests runs the chart's test hooks after a successful apply; a failing test fails
	// the apply with a *TestError, and with Atomic undoes the revision.
	RunTests bool
	// TakeOwnership adopts objects that exist without Helm's ownership metadata, as
	// `helm install --take-ownership` does; the plan refuses objects of other releases first.
	TakeOwnership bool
}

// Outcome is the result of Apply.
type Outcome struct {
	Release *release.Release
	// Recovered says what was done to a release left pending; its Action is RecoveryNone
	// when the release was not pending.
	Recovered Recovered
	// Removed lists the objects that only failed revisions had created, deleted after the
	// upgrade; RemoveErr is why deleting them failed.
	Removed   []string
	RemoveErr error
}

// Recovered is what was done to a release left pending before the operation ran.
type Recovered struct {
	Action Recovery
	// Status is what the release was left in, Revision its interrupted revision.
	Status   rcommon.Status
	Revision int
	// RolledBackTo is the revision rolled back to (RecoveryRollback).
	RolledBackTo int
}

// OperationError is a failed install or upgrade, with what was done about it.
type OperationError struct {
	Operation string // "install" or "upgrade"
	Release   string // namespace/name
	Err       error  // the cause: *FailedError, *TimeoutError, a Helm error, the context's error
	// Undo is what atomic did about it.
	Undo Undo
	// Cancelled is set when the context was cancelled during the operation.
	Cancelled bool
}

func (e *OperationError) Error() string {
	msg := fmt.Sprintf("%s of release %s failed: %v", e.Operation, e.Release, e.Err)
	switch {
	case e.Undo.Err != nil:
		msg += fmt.Sprintf("; undoing it because atomic is set failed too: %v", e.Undo.Err)
	case e.Undo.Done():
		msg += "; the release was " + e.Undo.past() + " because atomic is set"
	case e.Cancelled:
		msg += "; the release was marked failed so the next apply can continue"
	}
	return msg
}

func (e *OperationError) Unwrap() error { return e.Err }

// UndoAction is how a failed revision is undone when Spec.Atomic is set.
type UndoAction string

const (
	// UndoNone: nothing was undone (atomic is not set, the operation was cancelled, or Helm
	// failed before recording a revision).
	UndoNone UndoAction = ""
	// UndoUninstall: a failed install was uninstalled.
	UndoUninstall UndoAction = "uninstall"
	// UndoRollback: a failed upgrade was rolled back to Undo.Revision.
	UndoRollback UndoAction = "rollback"
)

// Undo is what Spec.Atomic did about a failed install, upgrade or test run.
type Undo struct {
	Action UndoAction
	// Revision is the revision rolled back to (UndoRollback), 0 when none was found.
	Revision int
	// Err is why the undo failed, nil when it succeeded.
	Err error
}

// Done reports whether the failed revision was undone.
func (u Undo) Done() bool { return u.Action != UndoNone && u.Err == nil }

// past is the undo for an error message: "uninstalled" or "rolled back to revision N".
func (u Undo) past() string {
	if u.Action == UndoUninstall {
		return "uninstalled"
	}
	return fmt.Sprintf("rolled back to revision %d", u.Revision)
}

// PendingError is returned for a release left pending when recovery is off.
type PendingError struct {
	Release  string
	Status   rcommon.Status
	Revision int
}

func (e *PendingError) Error() string {
	return fmt.Sprintf("release %s is %s at revision %d: another operation (install/upgrade/rollback) is in progress or was interrupted", e.Release, e.Status, e.Revision)
}

// recoveredDescription marks revisions the provider set to failed to recover them.
const recoveredDescription = "Interrupted while %s; marked failed by gitlabk8s so the release can be upgraded"

// ChangedError is returned when the release's history is no longer what the decision was made
// on: something else operated on the release between the plan's reading and the apply.
type ChangedError struct {
	Release  string
	Expected Revision
	Found    Revision
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("release %s changed while it was being applied: its newest revision is %d (%s), expected %d (%s)",
		e.Release, e.Found.Version, e.Found.Status, e.Expected.Version, e.Expected.Status)
}

// Apply carries out next, the decision the caller rendered for (see [Client.Next]): the
// recovery of a release left pending, then the install or the upgrade, which records
// next.Target.Revision.
func (c *Client) Apply(ctx context.Context, spec Spec, next Next) (*Outcome, error) {
	return c.apply(ctx, c.configuration(ctx, spec.Namespace, spec.Capabilities), spec, next)
}

func (c *Client) apply(ctx context.Context, cfg *action.Configuration, spec Spec, next Next) (*Outcome, error) {
	last, err := lastRelease(cfg.Releases, spec.Name)
	if err != nil {
		return nil, err
	}
	if found := revisionOf(last); found != next.Last {
		return nil, &ChangedError{Release: releaseID(spec), Expected: next.Last, Found: found}
	}
	if next.Refused {
		return nil, fmt.Errorf("release %s exists (revision %d, %s) and taking it over is not allowed", releaseID(spec), next.Last.Version, next.Last.Status)
	}
	prepareKubeClient(cfg, spec, last)
	out := &Outcome{}
	if next.Recovery != RecoveryNone {
		if !spec.RecoverPending {
			return nil, &PendingError{Release: releaseID(spec), Status: last.Info.Status, Revision: last.Version}
		}
		if out.Recovered, err = c.recover(cfg, spec, last, next); err != nil {
			return nil, err
		}
	}
	switch next.Operation {
	case OperationInstall:
		out.Release, err = c.install(ctx, cfg, spec, next.Replace)
	default:
		out.Release, err = c.upgrade(ctx, cfg, spec, out)
	}
	if err != nil || !spec.RunTests {
		return out, err
	}
	if err := c.runTests(cfg, spec); err != nil {
		return out, c.testsFailed(cfg, spec, lastDeployed(cfg, spec.Name, out.Release.Version), err)
	}
	return out, nil
}

// lastDeployed returns the newest revision before revision that was deployed or superseded,
// 0 when there is none.
func lastDeployed(cfg *action.Configuration, name string, revision int) int {
	history, err := cfg.Releases.History(name)
	if err != nil {
		return 0
	}
	found := 0
	for _, h := range history {
		r, ok := h.(*release.Release)
		if !ok || r.Version >= revision || r.Version <= found || r.Info == nil {
			continue
		}
		if r.Info.Status == rcommon.StatusDeployed || r.Info.Status == rcommon.StatusSuperseded {
			found = r.Version
		}
	}
	return found
}

// recover carries out next.Recovery on a release left pending by an interrupted run, so that
// Helm can operate on it. Terraform's state lock means no other run is operating on it.
func (c *Client) recover(cfg *action.Configuration, spec Spec, last *release.Release, next Next) (Recovered, error) {
	status := last.Info.Status
	done := Recovered{Action: next.Recovery, Status: status, Revision: last.Version}
	if next.Recovery == RecoveryUninstall {
		// Nothing of it ever became ready: remove it and install afresh.
		c.logf("release %s is %s at revision %d: uninstalling it before installing again", releaseID(spec), status, last.Version)
		if err := c.uninstall(cfg, spec.Name, spec.Timeout, CascadeForeground, true); err != nil {
			return Recovered{}, fmt.Errorf("recover release %s from %s: %w", releaseID(spec), status, err)
		}
		return done, nil
	}
	// The interrupted revision is recorded as failed, so history shows what happened.
	last.SetStatus(rcommon.StatusFailed, fmt.Sprintf(recoveredDescription, status))
	if err := cfg.Releases.Update(last); err != nil {
		return Recovered{}, fmt.Errorf("recover release %s from %s: mark revision %d failed: %w", releaseID(spec), status, last.Version, err)
	}
	if next.Recovery == RecoveryMarkFailed {
		c.logf("release %s was %s at revision %d and has no deployed revision: it was marked failed before upgrading", releaseID(spec), status, last.Version)
		return done, nil
	}
	// Helm's upgrade patches from the last deployed revision's manifest, so a field that only
	// the interrupted revision added would stay on the live objects. Rolling back first patches
	// from the interrupted revision's manifest, which removes what it added.
	c.logf("release %s is %s at revision %d: rolling back to revision %d, the last deployed, before upgrading", releaseID(spec), status, last.Version, next.RollbackTo)
	undo := spec
	// The upgrade that follows waits; waiting for the rollback too would only double the time.
	undo.Wait = false
	if err := c.rollback(cfg, undo, next.RollbackTo); err != nil {
		return Recovered{}, fmt.Errorf("recover release %s from %s: %w", releaseID(spec), status, err)
	}
	done.RolledBackTo = next.RollbackTo
	return done, nil
}

func (c *Client) install(ctx context.Context, cfg *action.Configuration, spec Spec, replace bool) (*release.Release, error) {
	install := action.NewInstall(cfg)
	install.ReleaseName = spec.Name
	install.Namespace = spec.Namespace
	install.WaitStrategy = waitStrategy(spec.Wait)
	install.WaitForJobs = spec.Wait
	install.Timeout = spec.Timeout
	install.Description = spec.Description
	install.Labels = releaseLabels(spec.Labels, "")
	install.PostRenderer = spec.PostRenderer
	install.PostRenderStrategy = postRenderStrategy
	install.ServerSideApply = true
	install.ForceConflicts = forceConflicts
	install.Replace = replace
	install.TakeOwnership = spec.TakeOwnership
	// Atomic is handled here, so that the undo is reported and a cancelled install is
	// recorded; Helm's own would run with the cancelled context.
	install.RollbackOnFailure = false
	installed, err := install.RunWithContext(ctx, spec.Chart, spec.Values)
	if err == nil {
		return asRelease(installed)
	}
	opErr := &OperationError{Operation: "install", Release: releaseID(spec), Err: classifyOperation(err)}
	if ctx.Err() != nil {
		opErr.Cancelled = true
		c.settleCancelled(cfg.Releases, spec, "installing")
		return nil, opErr
	}
	if spec.Atomic {
		opErr.Undo = Undo{Action: UndoUninstall, Err: c.uninstall(cfg, spec.Name, spec.Timeout, CascadeForeground, false)}
	}
	return nil, opErr
}

func (c *Client) upgrade(ctx context.Context, cfg *action.Configuration, spec Spec, out *Outcome) (*release.Release, error) {
	stale := failedSinceDeployed(cfg, spec.Name)
	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = spec.Namespace
	upgrade.WaitStrategy = waitStrategy(spec.Wait)
	upgrade.WaitForJobs = spec.Wait
	upgrade.Timeout = spec.Timeout
	upgrade.MaxHistory = spec.MaxHistory
	upgrade.Description = spec.Description
	// Helm carries the previous revision's labels over, and drops those set to "null".
	upgrade.Labels = releaseLabels(spec.Labels, "null")
	upgrade.PostRenderer = spec.PostRenderer
	upgrade.PostRenderStrategy = postRenderStrategy
	upgrade.ServerSideApply = "true"
	upgrade.ForceConflicts = forceConflicts
	// The configuration is the whole truth: never merge the values of the previous revision.
	upgrade.ResetValues = true
	upgrade.TakeOwnership = spec.TakeOwnership
	upgrade.RollbackOnFailure = false
	upgraded, err := upgrade.RunWithContext(ctx, spec.Name, spec.Chart, spec.Values)
	rel, typeErr := asRelease(upgraded)
	if err == nil && typeErr != nil {
		return nil, typeErr
	}
	if err == nil {
		out.Removed, out.RemoveErr = c.removeLeftovers(cfg, rel, stale)
		return rel, nil
	}
	opErr := &OperationError{Operation: "upgrade", Release: releaseID(spec), Err: classifyOperation(err)}
	if ctx.Err() != nil {
		opErr.Cancelled = true
		c.settleCancelled(cfg.Releases, spec, "upgrading")
		return nil, opErr
	}
	if !spec.Atomic || rel == nil || rel.Version == 0 {
		// rel is nil when Helm failed before recording a revision: nothing to undo.
		return nil, opErr
	}
	target, err := lastSuccessful(cfg, spec.Name, rel.Version)
	switch {
	case err != nil:
	case target == 0:
		err = errors.New("no earlier successful revision to roll back to")
	default:
		err = c.rollback(cfg, spec, target)
	}
	opErr.Undo = Undo{Action: UndoRollback, Revision: target, Err: err}
	return nil, opErr
}

// Rollback rolls the release back to revision and waits for it like an upgrade.
func (c *Client) Rollback(ctx context.Context, spec Spec, revision int) error {
	cfg := c.configuration(ctx, spec.Namespace, spec.Capabilities)
	last, err := lastRelease(cfg.Releases, spec.Name)
	if err != nil {
		return err
	}
	prepareKubeClient(cfg, spec, last)
	return c.rollback(cfg, spec, revision)
}

func (c *Client) rollback(cfg *action.Configuration, spec Spec, revision int) error {
	rollback := action.NewRollback(cfg)
	rollback.Version = revision
	rollback.WaitStrategy = waitStrategy(spec.Wait)
	rollback.WaitForJobs = spec.Wait
	rollback.ServerSideApply = "true"
	rollback.ForceConflicts = forceConflicts
	rollback.Timeout = spec.Timeout
	rollback.MaxHistory = spec.MaxHistory
	rollback.CleanupOnFail = true
	if err := rollback.Run(spec.Name); err != nil {
		return fmt.Errorf("roll back release %s to revision %d: %w", releaseID(spec), revision, err)
	}
	return nil
}

// Cascade is how deleting an object deletes what it owns, as `helm uninstall --cascade` and
// the API server's propagation policies name it.
type Cascade string

const (
	// CascadeBackground deletes the objects at once; the garbage collector removes what they
	// owned afterwards.
	CascadeBackground Cascade = "background"
	// CascadeForeground deletes an object only after what it owns is gone.
	CascadeForeground Cascade = "foreground"
	// CascadeOrphan leaves what the objects owned in place.
	CascadeOrphan Cascade = "orphan"
)

// settleCancelled makes sure a cancelled operation does not leave the release pending:
// Helm returns on cancellation but leaves an install's record as it was. Helm's storage
// takes no context, so the cancelled one does not stop this.
func (c *Client) settleCancelled(releases *storage.Storage, spec Spec, doing string) {
	last, err := lastRelease(releases, spec.Name)
	if err != nil {
		c.logf("release %s: could not read the history after the cancellation: %v", releaseID(spec), err)
		return
	}
	if last == nil || !last.Info.Status.IsPending() {
		return
	}
	last.SetStatus(rcommon.StatusFailed, fmt.Sprintf("Cancelled while %s", doing))
	if err := releases.Update(last); err != nil {
		c.logf("release %s: could not mark the cancelled revision %d failed: %v", releaseID(spec), last.Version, err)
	}
}

// forceConflicts is how the provider applies server-side: as the owner of every field the
// chart sets. A field that someone changed since (kubectl edit, kubectl scale, a helm upgrade
// with --set) is the drift the plan showed, and the apply restores it rather than failing
// on the conflict, as the client-side apply did before.
const forceConflicts = true

// prepareKubeClient tells cfg's kube client how to apply spec over objects that exist: what
// to leave to others, and to adopt the fields of the client-side managers when last, the
// newest revision, was applied client-side (see adoptClientSideFields).
func prepareKubeClient(cfg *action.Configuration, spec Spec, last *release.Release) {
	if kc, ok := cfg.KubeClient.(*contextKubeClient); ok {
		kc.adoptClientSide = appliedClientSide(last)
		kc.leaveToOthers = spec.LeaveToOthers
	}
}

// postRenderStrategy has Helm post-render the release's hooks and its objects, each apart,
// so that the plan check covers both, and a hook that is also an object of the chart (a
// ServiceAccount a pre-install Job runs as) is no duplicate in one stream.
const postRenderStrategy = action.PostRenderStrategySeparate

// waitStrategy is what Helm is told of waiting: whether it waits for the release's objects
// at all. Every wait Helm makes goes to the provider's waiter (contextKubeClient.GetWaiter).
func waitStrategy(wait bool) helmkube.WaitStrategy {
	if wait {
		return helmkube.StatusWatcherStrategy
	}
	return helmkube.HookOnlyStrategy
}

func releaseID(spec Spec) string { return spec.Namespace + "/" + spec.Name }

// releaseLabels are labels as Helm takes them: an empty value becomes unset, or, for an
// upgrade, Helm's "null" that removes the label the previous revision had.
func releaseLabels(labels map[string]string, unset string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		switch {
		case v != "":
			out[k] = v
		case unset != "":
			out[k] = unset
		}
	}
	return out
}
