package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/refusal"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
)

// addDryRunDiagnostics turns what the server-side dry run of the changed objects refused into
// plan errors. Without a cluster, or without the right to ask, the plan goes on with one warning
// saying what was not checked (fields: the schema the fields were checked against). Objects of
// kinds the release defines and the cluster does not serve yet were checked against their
// definitions instead, and one warning names them.
func addDryRunDiagnostics(ctx context.Context, m *releaseModel, checked *release.DryRunChecked, fields string, diags *diag.Diagnostics) {
	if checked.Skipped != nil {
		addDryRunSkipped(m, fields, checked.Skipped.Error(), diags)
		return
	}
	if checked.NamespaceMissing {
		// A new environment in the same plan: its namespace exists once the apply creates it.
		tflog.Info(ctx, "namespace does not exist yet; its objects are not dry-run", map[string]any{"release": m.releaseID()})
	}
	if checked.NamespaceTerminating {
		diags.Append(m.diagnostics().Warning("Namespace Being Deleted", fmt.Sprintf(
			"Release %s: the namespace %s is being deleted, and the API server takes no new object into it until it is gone, so the objects "+
				"that go into it were not dry-run. An environment's apply waits for the namespace to go and creates it again before the "+
				"release is applied; a destroy goes on regardless. What a dry run would refuse in these objects shows only at the apply.",
			m.releaseID(), m.Namespace.ValueString())))
	}
	var notChecked []string
	sideEffects := map[string][]string{}
	for _, o := range checked.Outcomes {
		var unsupported *kube.DryRunUnsupportedError
		if errors.As(o.Err, &unsupported) {
			sideEffects[unsupported.Webhook] = append(sideEffects[unsupported.Webhook], o.Key)
			continue
		}
		if reason := addDryRunDiagnostic(m, o, checked.PodSecurityLevels, diags); reason != "" {
			notChecked = append(notChecked, reason)
		}
	}
	if len(notChecked) > 0 {
		addDryRunSkipped(m, fields, strings.Join(notChecked, "; "), diags)
	}
	for _, r := range checked.PodSecurity {
		if dryRunWarned(checked, r.Key, r.Level) {
			continue // reported from the dry run's warning, which the namespace's warn label asked for
		}
		addPodsRefused(m, r, r.Violation(), diags)
	}
	addWebhooksNotCalled(m, sideEffects, diags)
	addNotServedWarning(m, checked.NotServed, diags)
}

// addRunningPodsWarning says which objects the apply leaves as they are have pods the Pod
// Security level the plan of the environment sets forbids: their pods running keep running, but
// the API server refuses every new one. The apply does not fail on them, so it is a warning.
func addRunningPodsWarning(m *releaseModel, refused []release.PodSecurityRefusal, diags *diag.Diagnostics) {
	if len(refused) == 0 {
		return
	}
	lines := make([]string, len(refused))
	for i, r := range refused {
		lines[i] = "  " + objectFrom(r.Key, r.Source) + ": " + r.Violation()
	}
	diags.Append(m.diagnostics().Warning("Running Pods Refused by the Planned Pod Security Level", fmt.Sprintf(
		"Release %s: the plan of its environment sets namespace %s to enforce the %q Pod Security level, and the pods of these objects, "+
			"which this plan leaves as they are, would not meet it. The pods running now keep running, but the API server refuses every "+
			"new one: a restart, a rollout or a scale-up fails. Change their pod templates (securityContext, volumes, host namespaces) to "+
			"meet the level, or give the environment's label %s a level that admits them.\n\n%s",
		m.releaseID(), m.Namespace.ValueString(), refused[0].Level, release.PodSecurityEnforceLabel, strings.Join(lines, "\n"))))
}

// dryRunWarned reports whether the dry run's answer for key warned that its pods violate level:
// the namespace's warn label names the level the environment's plan makes it enforce, and
// addDryRunWarnings reported the object already.
func dryRunWarned(checked *release.DryRunChecked, key, level string) bool {
	for _, o := range checked.Outcomes {
		if o.Key != key || o.Err != nil || o.Result == nil {
			continue
		}
		for _, w := range o.Result.Warnings {
			if warned, ok := refusal.PodSecurityViolation(w); ok && warned == level {
				refuses, _ := checked.ReadWarning(warned)
				return refuses
			}
		}
	}
	return false
}

// objectFrom names an object by its key and the chart file it comes from.
func objectFrom(key, source string) string {
	if source == "" {
		return key
	}
	return key + " (from " + source + ")"
}

// addPodsRefused reports an object whose pods a Pod Security level forbids: the level its
// namespace enforces, or the one the plan of its environment sets (r.Planned), at the policy
// version r names; detail is what the level forbids.
func addPodsRefused(m *releaseModel, r release.PodSecurityRefusal, detail string, diags *diag.Diagnostics) {
	enforcing := fmt.Sprintf("namespace %s enforces the %q Pod Security level", m.Namespace.ValueString(), r.Level)
	orElse := ""
	if r.Planned {
		enforcing = fmt.Sprintf("the plan of its environment sets namespace %s to enforce the %q Pod Security level", m.Namespace.ValueString(), r.Level)
		if r.Version != "" && r.Version != "latest" {
			enforcing += fmt.Sprintf(" at policy version %s (%s)", r.Version, release.PodSecurityVersionLabel)
		}
		orElse = fmt.Sprintf(", or give the environment's label %s a level that admits them", release.PodSecurityEnforceLabel)
	}
	at, object := path.Root("manifests").AtMapKey(r.Key), objectFrom(r.Key, r.Source)
	if r.Test {
		// A test hook is no manifest of the release: run_tests runs it after the apply, which
		// then fails.
		at, object = path.Root("run_tests"), "the test hook "+object+", which run_tests runs after the apply,"
		orElse += ", or set run_tests = false"
	}
	diags.Append(m.diagnostics().AttributeError(at, "Pods Refused by Pod Security", fmt.Sprintf(
		"Release %s: %s, and the pods of %s would not meet it, so they would never be created. Change the pod template "+
			"(securityContext, volumes, host namespaces) to meet the level%s.\n\n%s",
		m.releaseID(), enforcing, object, orElse, detail)))
}

// addWebhooksNotCalled says, once per release, which objects could not be dry-run because an
// admission webhook that declares side effects applies to them: the API server calls such a
// webhook only for real requests and answers a dry run with an error, so neither the webhook
// nor anything else on the server checked them. That is no reason to fail the plan.
func addWebhooksNotCalled(m *releaseModel, objectsByWebhook map[string][]string, diags *diag.Diagnostics) {
	d := m.diagnostics()
	if len(objectsByWebhook) == 0 {
		return
	}
	lines := make([]string, 0, len(objectsByWebhook))
	for _, w := range slices.Sorted(maps.Keys(objectsByWebhook)) {
		lines = append(lines, fmt.Sprintf("  %q: %s", w, strings.Join(objectsByWebhook[w], ", ")))
	}
	diags.Append(d.Warning("Admission Webhooks Not Called by the Plan", fmt.Sprintf(
		"Release %s: these admission webhooks declare side effects (sideEffects: Some or Unknown), and the API server never calls such a "+
			"webhook on a dry run, so it refused to dry-run the objects they apply to. What these webhooks, immutable fields, quota and "+
			"Pod Security refuse in these objects shows only when the apply runs. The webhooks' owners can declare sideEffects: None or "+
			"NoneOnDryRun (kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations) so that plans check them.\n\n%s",
		m.releaseID(), strings.Join(lines, "\n"))))
}

// addDryRunDiagnostic reports one outcome. It returns, instead, why the object could not be
// checked when the dry run itself did not get an answer (RBAC, the network).
func addDryRunDiagnostic(m *releaseModel, o release.DryRunOutcome, levels release.PodSecurityLevels, diags *diag.Diagnostics) string {
	d := m.diagnostics()
	at := path.Root("manifests").AtMapKey(o.Key)
	object := objectFrom(o.Key, o.Source)
	var refused *kube.RefusedError
	var unknownKind *kube.UnknownKindError
	switch {
	case o.Err == nil && o.Unchanged:
		// Dry-run for its nulls alone: what the API server warns about in an object this plan
		// does not change is not this plan's to report.
	case o.Err == nil:
		addDryRunWarnings(m, o, object, levels, diags)
	case errors.As(o.Err, &refused) && o.Unchanged && (refused.Immutable() || refused.Class == refusal.Invalid):
		// Dry-run for its nulls alone, and refused for its fields: a webhook, a policy or a quota
		// that refuses it now is named by the cases below.
		diags.Append(d.AttributeError(at, "Null Field Refused by the API Server", fmt.Sprintf(
			"Release %s: %s does not change, yet %s refused a server-side dry run of it, and the upgrade applies every object, so it "+
				"would fail however the release changes. The object holds null at %s. The API server drops such an entry when it "+
				"creates the object, and may fill in a default there (a PersistentVolumeClaim's storageClassName gets the cluster's "+
				"default class); every later apply asks to remove that value (a server-side apply, as this provider and Helm 4 make, "+
				"and Helm 3's patch alike), which the API server refuses for a field that cannot change. Give the chart a value for "+
				"these keys, the one the object holds in the cluster (kubectl get -o yaml shows it), or take them out with patches "+
				"(a JSON 6902 remove of the path). force_replace would delete and recreate the object at every upgrade, so the plan "+
				"does not offer it.\n\n%s",
			m.releaseID(), object, refuser(refused), strings.Join(o.Nulls, ", "), refused.Message)))
	case errors.As(o.Err, &refused) && refused.Immutable() && m.ForceReplace.ValueBool():
		diags.Append(d.AttributeWarning(at, "Object Will Be Replaced", fmt.Sprintf(
			"Release %s: the change to %s changes %s, which cannot change once the object exists. With force_replace, the apply "+
				"deletes the object and creates it again, which interrupts what it runs.%s\n\n%s",
			m.releaseID(), object, immutableFields(refused), nullsNote(o.Nulls), refused.Message)))
	case errors.As(o.Err, &refused) && refused.Immutable():
		diags.Append(d.AttributeError(at, "Immutable Field Changed", fmt.Sprintf(
			"Release %s: the API server would refuse the change to %s, because it changes %s, which cannot change once the object "+
				"exists. Delete the object and let the apply create it again (set force_replace = true on the release to have the apply do "+
				"it), or give the object a new name. Deleting it interrupts what it runs.%s\n\n%s",
			m.releaseID(), object, immutableFields(refused), nullsNote(o.Nulls), refused.Message)))
	case errors.As(o.Err, &refused) && refused.Webhook != "":
		diags.Append(d.AttributeError(at, "Object Refused by an Admission Webhook", fmt.Sprintf(
			"Release %s: admission webhook %q refused a server-side dry run of %s, so the apply would fail. Change the template or the "+
				"values so the object meets the cluster's policy, or ask the webhook's owners to allow it (kubectl get "+
				"validatingwebhookconfigurations,mutatingwebhookconfigurations names them). Nothing was written to the cluster.\n\n%s",
			m.releaseID(), refused.Webhook, object, refused.Message)))
	case errors.As(o.Err, &refused):
		diags.Append(d.AttributeError(at, "Object Refused by the API Server", fmt.Sprintf(
			"Release %s: %s refused a server-side dry run of %s, so the apply would fail. Fix the template or the values that "+
				"produce it, or the namespace's policy (quota, Pod Security, admission policies) that refuses it.\n\n%s",
			m.releaseID(), refuser(refused), object, refused.Message)))
	case errors.As(o.Err, &unknownKind):
		diags.Append(d.AttributeError(at, "Kind Not Served by the Cluster", fmt.Sprintf(
			"Release %s: the cluster serves no %s %s, so the apply of %s would fail. Install the CustomResourceDefinition first, or use "+
				"an API version the cluster serves (kubectl api-resources lists them).", m.releaseID(), unknownKind.APIVersion, unknownKind.Kind, object)))
	case kube.IsNamespaceNotFound(o.Err):
		// The namespace went away between the check and the dry run; nothing to say.
	default:
		var forbidden *kube.ForbiddenError
		if errors.As(o.Err, &forbidden) {
			return fmt.Sprintf("%s: %s is not permitted", object, forbidden.Verb)
		}
		return object + ": " + o.Err.Error()
	}
	return ""
}

// addDryRunWarnings reports what the API server warned about. Pod Security warns, instead of
// refusing, about a workload whose pods the namespace's enforced level refuses: the pods would
// never be created, so that is an error. A warning about the level replaced, which the
// environment's plan sets another in place of, is about a namespace the apply changes.
func addDryRunWarnings(m *releaseModel, o release.DryRunOutcome, object string, levels release.PodSecurityLevels, diags *diag.Diagnostics) {
	d := m.diagnostics()
	at := path.Root("manifests").AtMapKey(o.Key)
	var other []string
	for _, w := range o.Result.Warnings {
		level, ok := refusal.PodSecurityViolation(w)
		if ok {
			refuses, replaced := levels.ReadWarning(level)
			if replaced {
				continue
			}
			if refuses {
				addPodsRefused(m, release.PodSecurityRefusal{Key: o.Key, Source: o.Source, Level: level, Version: levels.Version, Planned: levels.Planned}, w, diags)
				continue
			}
		}
		other = append(other, w)
	}
	if len(other) > 0 {
		diags.Append(d.AttributeWarning(at, "API Server Warnings", fmt.Sprintf(
			"Release %s: a server-side dry run of %s was accepted with these warnings:\n  %s", m.releaseID(), object, strings.Join(other, "\n  "))))
	}
}

// nullsNote warns, for an object refused for an immutable field, that its nulls may be the
// cause: a null asks to remove what the API server filled in at creation, at every apply, so
// replacing the object would not end it.
func nullsNote(nulls []string) string {
	if len(nulls) == 0 {
		return ""
	}
	return fmt.Sprintf(" The object holds null at %s: if the refused field is among them, the null asks to remove the value the API "+
		"server filled in when it created the object, and every upgrade would ask again and replace the object again. Give such a "+
		"key a value, the one the object holds in the cluster, or remove it with patches, rather than replacing the object.",
		strings.Join(nulls, ", "))
}

func immutableFields(e *kube.RefusedError) string {
	var fields []string
	for _, c := range e.Causes {
		if c.Field != "" {
			fields = append(fields, c.Field)
		}
	}
	if len(fields) == 0 {
		return "a field"
	}
	return strings.Join(fields, ", ")
}

// addDryRunSkipped says, once per release, what the plan could not check and why.
// fields says which schema the fields were checked against (fieldsCheckedAgainst).
func addDryRunSkipped(m *releaseModel, fields, why string, diags *diag.Diagnostics) {
	d := m.diagnostics()
	diags.Append(d.Warning("Server-Side Checks Not Run", fmt.Sprintf(
		"Release %s: the plan could not dry-run its changes on the cluster, so immutable fields, Pod Security, ResourceQuota and "+
			"admission webhooks are checked only when the apply runs. API versions were checked against the target Kubernetes version, "+
			"and %s. To check everything in the plan, give the plan job an identity that may patch the release's objects.\n\n%s",
		m.releaseID(), fields, why)))
}
