package provider

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/drift"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/patch"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/readiness"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
)

// The release's diagnostics. Wording shared with the environment lives in diagnostics.go.

// ignoreRuleDiagnostic points an invalid ignore_differences rule (at rule) at the attribute
// and list element it concerns.
func ignoreRuleDiagnostic(rule path.Path, err error) diag.Diagnostic {
	d := noRelease
	at := rule
	var ruleErr *drift.RuleError
	if errors.As(err, &ruleErr) && ruleErr.Field != "" {
		at = rule.AtName(ruleErr.Field).AtListIndex(ruleErr.Index)
	}
	return d.AttributeError(at, "Invalid Ignore Differences Rule",
		at.String()+" cannot be used: "+errorText(err)+". Fix the rule, or remove it.")
}

// errorText is err's message, or that of the error it wraps for a *drift.RuleError, whose
// attribute the diagnostic's path already names.
func errorText(err error) string {
	var ruleErr *drift.RuleError
	if errors.As(err, &ruleErr) {
		return ruleErr.Err.Error()
	}
	return err.Error()
}

// valuesErrorPath points a chart.MergeValues error at the attribute, and the document or key,
// it names.
func valuesErrorPath(err error) path.Path {
	var values *chart.ValuesError
	if !errors.As(err, &values) {
		return path.Root("values")
	}
	switch values.Input {
	case chart.InDocuments:
		return path.Root("values").AtListIndex(values.Index)
	case chart.InSensitiveDocuments:
		return path.Root("values_sensitive").AtListIndex(values.Index)
	case chart.InSet:
		return path.Root("set").AtMapKey(values.Key)
	default:
		return path.Root("set_sensitive").AtMapKey(values.Key)
	}
}

// valuesDiagnostic refuses values that chart.MergeValues cannot merge, at the attribute, and
// the document or key, the error names. d builds it.
func valuesDiagnostic(id string, err error, d releaseDiagnostics) diag.Diagnostic {
	at := valuesErrorPath(err)
	message := err.Error()
	var values *chart.ValuesError
	if errors.As(err, &values) {
		message = at.String() + ": " + values.Err.Error()
	}
	return d.AttributeError(at, "Invalid Values", fmt.Sprintf(
		"The values of release %s could not be merged. Fix the YAML document or the --set path named below.\n\n%s", id, message))
}

func planMismatchDiagnostic(d releaseDiagnostics, id string, err error) diag.Diagnostic {
	return d.Error("Chart Rendered Differently at Apply", fmt.Sprintf(
		"Release %s was not applied: what Helm renders now is not what the plan showed, and nothing was changed in the cluster. This "+
			"happens when an object that a template looks up changed since the plan, when the release changed since the plan, or when the "+
			"template tests .Capabilities that differ from the plan's. Plan again. Secret values are shown as hashes.\n\n%v", id, err))
}

// applyDiagnostic explains a failed install or upgrade: what failed, what atomic did and what
// to do next. d builds it.
func applyDiagnostic(d releaseDiagnostics, id string, creating bool, err error) diag.Diagnostic {
	summary := "Unable to Upgrade Release"
	if creating {
		summary = "Unable to Install Release"
	}
	var (
		mismatch *helmrelease.PlanMismatchError
		pending  *helmrelease.PendingError
		changed  *helmrelease.ChangedError
		op       *helmrelease.OperationError
		failed   *helmrelease.FailedError
		blocked  *helmrelease.BlockedError
		timeout  *helmrelease.TimeoutError
		tested   *helmrelease.TestError
		owned    *helmrelease.OwnershipError
	)
	switch {
	case errors.As(err, &tested):
		return d.Error("Release Test Failed", fmt.Sprintf(
			"Release %s was applied, but a test hook of its chart failed, and run_tests is set. The message names the hook, its pod "+
				"and why it failed; see its log with `kubectl logs` while its hook-delete-policy keeps it, fix the release or its test, "+
				"and apply again.%s\n\n%s", id, atomicUndone(tested.Undo), err))
	case errors.As(err, &mismatch):
		return planMismatchDiagnostic(d, id, mismatch)
	case errors.As(err, &changed):
		return d.Error("Release Changed During Apply", fmt.Sprintf(
			"Release %s was not applied: another operation (helm, or another run) changed it after this apply read its history, and "+
				"nothing was changed by this apply. Check `helm history`, then plan and apply again.\n\n%s", id, err))
	case errors.As(err, &pending):
		return d.Error("Release Operation In Progress", fmt.Sprintf(
			"Release %s is %s at revision %d, left by another operation or by a run that was killed, and recover_pending is false. "+
				"If nothing else is operating on it, set recover_pending = true (the default) or run `helm rollback`, then apply again.\n\n%s",
			id, pending.Status, pending.Revision, err))
	}
	var what string
	switch {
	case errors.As(err, &failed):
		what = "Objects of the release failed while it was waited for; the message names each object, Kubernetes' reason and its " +
			"message (the pod's, the controller's, the admission's). Fix the image, command, configuration, quota or storage class and apply again."
	case errors.As(err, &blocked):
		what = fmt.Sprintf("Objects of the release stayed blocked longer than blocked_timeout (%s); the message names each object, "+
			"Kubernetes' reason and its message. Fix the cause (resources, node selectors, the storage class, the readiness probe), or "+
			"raise or unset blocked_timeout to wait for it, and apply again.", blocked.After)
	case errors.As(err, &timeout) && len(timeout.Blocked) > 0:
		what = fmt.Sprintf("The release's objects were not ready within the timeout; the message says what was still pending and why. "+
			"%s waited to the end for a reason that might have cleared by itself (%s), which the wait allows for until timeout while "+
			"blocked_timeout is unset or longer. Fix the cause (resources, node selectors, affinity, the storage class, the readiness "+
			"probe), or set blocked_timeout (for example \"1m\") to fail sooner with that reason on a cluster that will not change "+
			"by itself, and apply again.", blockedObjects(timeout.Blocked), blockedReasons(timeout.Blocked))
	case errors.As(err, &timeout):
		what = "The release's objects were not ready within the timeout; the message says what was still pending and why, where " +
			"Kubernetes says. Check the objects with kubectl describe, or raise timeout."
	case errors.As(err, &owned):
		what = "An object of the release exists in the cluster without the release's Helm ownership metadata (made with kubectl apply " +
			"or another tool), and Helm does not overwrite it. Set take_ownership = true to adopt objects that have no owner, or delete " +
			"the object, and apply again."
	case errors.As(err, &op) && op.Cancelled:
		what = "The operation was cancelled. The release was marked failed rather than left pending, so the next apply continues from there."
	default:
		what = "Helm reported the error below."
	}
	if errors.As(err, &op) {
		what += atomicUndone(op.Undo)
	}
	return d.Error(summary, fmt.Sprintf("Applying release %s failed. %s\n\n%s", id, what, err))
}

// blockedObjects names the objects of a wait's end that were blocked: one by its name, more by
// their number.
func blockedObjects(blocked []readiness.Failure) string {
	if len(blocked) == 1 {
		return blocked[0].Object
	}
	return fmt.Sprintf("%d objects", len(blocked))
}

// blockedReasons lists the distinct reasons of blocked objects, in their order.
func blockedReasons(blocked []readiness.Failure) string {
	var reasons []string
	for _, b := range blocked {
		if !slices.Contains(reasons, b.Reason) {
			reasons = append(reasons, b.Reason)
		}
	}
	return strings.Join(reasons, ", ")
}

// atomicUndone is the sentence that says how atomic undid a failed revision, empty when it
// did not (the error that follows says why an undo failed).
func atomicUndone(undo helmrelease.Undo) string {
	switch {
	case !undo.Done():
		return ""
	case undo.Action == helmrelease.UndoUninstall:
		return " Because atomic is set, the release was uninstalled."
	default:
		return fmt.Sprintf(" Because atomic is set, the release was rolled back to revision %d.", undo.Revision)
	}
}

// recoveredWarning says what the apply did to a release an interrupted run had left pending.
func recoveredWarning(d releaseDiagnostics, id string, done helmrelease.Recovered) diag.Diagnostic {
	var what string
	switch done.Action {
	case helmrelease.RecoveryUninstall:
		what = "it was uninstalled and installed again"
	case helmrelease.RecoveryMarkFailed:
		what = "that revision was marked failed and the release upgraded"
	default:
		what = fmt.Sprintf("it was rolled back to revision %d and upgraded", done.RolledBackTo)
	}
	return d.Warning("Release Recovered", fmt.Sprintf("Release %s had been left by an interrupted run: release was %s at revision %d; %s.",
		id, done.Status, done.Revision, what))
}

func pendingWarning(d releaseDiagnostics, id string, rel *helmv1.Release, recoverPending bool) diag.Diagnostic {
	next := "The next apply recovers it (recover_pending): a pending install is uninstalled and installed again, a pending upgrade or " +
		"rollback is marked failed, rolled back to the last deployed revision when there is one, and upgraded."
	if !recoverPending {
		next = "recover_pending is false, so the next apply fails until someone runs `helm rollback` or sets recover_pending = true."
	}
	return d.Warning("Release Left Pending", fmt.Sprintf(
		"Release %s is %s at revision %d: an operation was interrupted or is still running. %s", id, rel.Info.Status, rel.Version, next))
}

// applyErrorDiagnostic explains a failed apply (release.Request.Apply): one that did not start
// (applyRefusedDiagnostic), one refused before Helm ran, with nothing of the release changed, or
// Helm's failure (applyDiagnostic).
func applyErrorDiagnostic(m *releaseModel, creating bool, err error) diag.Diagnostic {
	id, d := m.releaseID(), m.diagnostics()
	var failed *release.ApplyError
	if !errors.As(err, &failed) {
		return applyRefusedDiagnostic(m, err)
	}
	switch failed.Step {
	case release.StepPlanned:
		return planMismatchDiagnostic(d, id, failed.Err)
	case release.StepDefinitions:
		advice := "Apply the release that installs them first (crds_from = gitlabk8s_release.<name>.crds orders the two), or raise timeout."
		var notEstablished *kube.NotEstablishedError
		if errors.As(err, &notEstablished) && len(notEstablished.Missing) == 0 {
			advice = "The API server has not accepted them (kubectl describe crd names the condition that is not met); fix the definitions, or raise timeout."
		}
		return d.Error("CustomResourceDefinitions Not Established", fmt.Sprintf(
			"Release %s was not applied: the CustomResourceDefinitions of crds_from were not established within the timeout, so the "+
				"cluster would not serve the kinds of its objects. %s\n\n%v", id, advice, failed.Err))
	case release.StepReplaceDefinition:
		return d.Error("Unable to Replace CustomResourceDefinition", fmt.Sprintf(
			"Release %s was not applied: a CustomResourceDefinition of its chart's crds/ could not be applied (crd_policy = %q). "+
				"Nothing else was changed. Fix the definition, or give the identity the right to patch customresourcedefinitions.\n\n%v",
			id, crdPolicyCreateReplace, failed.Err))
	case release.StepDefinitionsReplaced:
		return d.Error("CustomResourceDefinitions Not Established", fmt.Sprintf(
			"Release %s was not upgraded: its chart's CustomResourceDefinitions were applied but not established within the timeout "+
				"(kubectl describe crd names the condition that is not met). Fix the definitions, or raise timeout.\n\n%v", id, failed.Err))
	case release.StepReplaceObject:
		var replace *helmrelease.ReplaceError
		if !errors.As(err, &replace) {
			return d.Error("Unable to Replace Objects", fmt.Sprintf("Release %s was not applied.\n\n%v", id, failed.Err))
		}
		return d.Error("Unable to Replace Object", fmt.Sprintf(
			"Release %s was not upgraded: %s, whose change needs it replaced (force_replace), could not be deleted. Delete it by hand, "+
				"or give the identity the right to delete it, then apply again.\n\n%s", id, replace.Key, replace.Err.Error()))
	case release.StepPrepare:
		return d.Error("Unable to Apply Release", fmt.Sprintf("The chart of release %s could not be prepared for Helm.\n\n%v", id, failed.Err))
	case release.StepRecord:
		return d.Error("Unable to Record Release", fmt.Sprintf(
			"Release %s was applied, but what the next plan compares it with could not be recorded.\n\n%v", id, failed.Err))
	default:
		return applyDiagnostic(d, id, creating, failed.Err)
	}
}

// applyRefusedDiagnostic explains why an apply did not start (release.Request.Apply): the
// history could not be read, a release to create exists, or it could not be rendered.
func applyRefusedDiagnostic(m *releaseModel, err error) diag.Diagnostic {
	id, d := m.releaseID(), m.diagnostics()
	var history *release.HistoryError
	if errors.As(err, &history) {
		return d.Error("Unable to Read Release", fmt.Sprintf(
			"The history of release %s could not be read, so it was not applied.\n\n%s", id, history.Err))
	}
	if refused, ok := takeOverDiagnostic(m, err); ok {
		return refused
	}
	if errors.As(err, new(*release.RenderError)) {
		return renderDiagnostic(m, err)
	}
	return d.Error("Unable to Apply Release", fmt.Sprintf("Release %s was not applied.\n\n%s", id, err))
}

// planRefusedDiagnostic explains why a plan could not be made (release.Request.Plan): a
// release that exists and is not taken over, an object that exists and that the apply could
// not have (another release's, or one Helm would refuse without take_ownership), or a rendering.
func planRefusedDiagnostic(m *releaseModel, err error) diag.Diagnostic {
	if refused, ok := takeOverDiagnostic(m, err); ok {
		return refused
	}
	var read *release.ReadError
	if errors.As(err, &read) {
		return m.diagnostics().Error("Unable to Read Release", fmt.Sprintf(
			"Release %s exists in the cluster and take_ownership is set, but its deployed revision could not be read to show what the "+
				"apply changes of it.\n\n%s", m.releaseID(), err))
	}
	return renderDiagnostic(m, err)
}

// takeOverDiagnostic explains, on take_ownership, a release that exists without being in the
// state (release.ExistsError), an object of another release (release.OwnedError) or an object
// without the release's ownership metadata that Helm would not install over (release.UnownedError).
func takeOverDiagnostic(m *releaseModel, err error) (diag.Diagnostic, bool) {
	id, d, at := m.releaseID(), m.diagnostics(), path.Root("take_ownership")
	var exists *release.ExistsError
	var owned *release.OwnedError
	var unowned *release.UnownedError
	switch {
	case errors.As(err, &unowned):
		return d.AttributeError(at, "Object Already Exists", unownedDetail(id, unowned)), true
	case errors.As(err, &exists):
		return d.AttributeError(at, "Release Already Exists", fmt.Sprintf(
			"Helm release %s already exists (revision %d, %s) and is not in the state. Import it with "+
				"`terraform import <address> %s`, set take_ownership = true to upgrade it from revision %d and manage it from then on, "+
				"or choose another name.", id, exists.Last.Version, exists.Last.Status, id, exists.Last.Version)), true
	case errors.As(err, &owned) && owned.Err != nil:
		return d.AttributeError(at, "Unable to Read Owners", fmt.Sprintf(
			"take_ownership is set, so the objects of release %s that exist are checked for belonging to another Helm release, and "+
				"reading them failed.\n\n%s", id, owned.Err)), true
	case errors.As(err, &owned):
		return d.AttributeError(at, "Object Belongs to Another Release", fmt.Sprintf(
			"%s exists in the cluster and belongs to Helm release %s (its meta.helm.sh/release-name and release-namespace "+
				"annotations), so release %s does not take it over, even with take_ownership: the other release would delete it at its "+
				"next upgrade or uninstall. Remove the object from one of the two charts, or uninstall release %s first.",
			owned.Object, owned.Owner, id, owned.Owner)), true
	}
	return nil, false
}

// unownedDetail says what the plan found of an object the apply would create: no Helm release
// owns it, or its annotations name this release without Helm's label; Helm would refuse either.
func unownedDetail(id string, unowned *release.UnownedError) string {
	if unowned.LeftBy != (helmrelease.Owner{}) {
		return fmt.Sprintf(
			"%s exists in the cluster with the ownership annotations of Helm release %s, which no longer exists (no revision of "+
				"it is stored, or its last was uninstalled): its uninstall kept the object, as the chart's helm.sh/resource-policy: keep "+
				"asks, and nothing will delete it. Helm would refuse to install or upgrade release %s over it and the apply would fail; "+
				"nothing was applied. Set take_ownership = true to adopt it, or delete the object.",
			unowned.Object, unowned.LeftBy, id)
	}
	if unowned.Annotated {
		return fmt.Sprintf(
			"%s exists in the cluster with the meta.helm.sh/release-name and release-namespace annotations of release %s but without "+
				"the label app.kubernetes.io/managed-by=Helm, which Helm requires before it installs or upgrades over an object, so "+
				"the apply would fail on it; nothing was applied. Set take_ownership = true to adopt it, or delete the object.",
			unowned.Object, id)
	}
	return fmt.Sprintf(
		"%s exists in the cluster and no Helm release owns it (it has no Helm ownership metadata: made with kubectl apply or "+
			"another tool, or kept by an uninstall), so Helm would refuse to install or upgrade release %s over it and the apply "+
			"would fail; nothing was applied. Set take_ownership = true to adopt objects that have no owner, or delete the object.",
		unowned.Object, id)
}

// renderDiagnostic explains why the release could not be rendered (release.RenderError), on
// the attribute concerned.
func renderDiagnostic(m *releaseModel, err error) diag.Diagnostic {
	id, d := m.releaseID(), m.diagnostics()
	var failed *release.RenderError
	if !errors.As(err, &failed) {
		return d.AttributeError(path.Root("chart"), "Unable to Render Chart", fmt.Sprintf(
			"Release %s could not be rendered.\n\n%s", id, err))
	}
	at := path.Root("chart")
	switch failed.Step {
	case release.StepLoad:
		if diagnostic, ok := repositoryConnectionDiagnostic(d, m, failed.Err); ok {
			return diagnostic
		}
		return d.AttributeError(at, "Unable to Load Chart", fmt.Sprintf(
			"The chart of release %s could not be loaded. Check chart, repository and version: a local path must exist, a remote "+
				"chart must exist in the repository at a version that matches.\n\n%s", id, failed.Err))
	case release.StepValues:
		return valuesDiagnostic(id, failed.Err, d)
	case release.StepPatch:
		if perr, ok := errors.AsType[*patch.Error](failed.Err); ok {
			return patchDiagnostic(d, path.Root("patches").AtListIndex(perr.Index), "Unable to Patch Chart", perr)
		}
		return d.AttributeError(path.Root("patches"), "Unable to Patch Chart", failed.Err.Error())
	case release.StepRender:
		return d.AttributeError(at, "Unable to Render Chart", fmt.Sprintf(
			"Helm could not render chart %s %s for release %s. The message names the template file and line; fix the template or the values it uses.\n\n%s",
			failed.Chart, failed.Version, id, failed.Err.Error()))
	case release.StepRedact:
		return d.AttributeError(at, "Unable to Redact Chart", fmt.Sprintf(
			"Chart %s %s cannot be shown for release %s without risking a sensitive value: the provider renders it again with each "+
				"sensitive value replaced by another of the same length and characters to find what derives from it, and that failed. "+
				"Make the objects and their structure depend only on non-sensitive values (a template may put a sensitive value into a "+
				"field, not decide with it which objects or list items exist).\n\n%s",
			failed.Chart, failed.Version, id, failed.Err))
	default:
		return d.AttributeError(at, "Invalid Rendered Manifests", fmt.Sprintf(
			"Chart %s %s rendered objects for release %s that cannot be applied. Fix the template that produces them.\n\n%s",
			failed.Chart, failed.Version, id, failed.Err))
	}
}

// takeOverWarning says that the apply takes over a release that is not in the state, naming
// the revision it upgrades, and shows what it changes of the deployed objects, as an import
// would read them (every value Helm recorded as given to the release hidden).
func takeOverWarning(m *releaseModel, planned *release.Plan) diag.Diagnostic {
	last := planned.Next.Last
	changes := manifest.DiffManifests(planned.Deployed, planned.Rendering.Manifests)
	return m.diagnostics().Warning("Taking Over Release", fmt.Sprintf(
		"Helm release %s exists in the cluster (revision %d, %s) and is not in the state. take_ownership is set, so the apply upgrades "+
			"it to revision %d and the state manages it from then on. What the upgrade changes of the deployed objects (values given "+
			"to the deployed revision are hidden):\n\n%s",
		m.releaseID(), last.Version, last.Status, planned.Next.Target.Revision, manifest.FormatChanges(changes)))
}
