package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/refusal"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
)

// dryRunConcurrency bounds the dry-run requests in flight for one release.
const dryRunConcurrency = 8

// podSecurityEnforceLabel is the namespace label that sets the Pod Security level pods must meet.
const podSecurityEnforceLabel = "pod-security.kubernetes.io/enforce"

// changedObject is an object of the release whose manifest the plan changes.
type changedObject struct {
	key    string
	source string
	object map[string]any
}

// dryRunOutcome is what the API server answered for one changed object.
type dryRunOutcome struct {
	changedObject
	result *kube.DryRunResult
	err    error
}

// dryRunChanges sends every object the plan changes to the API server as a server-side dry
// run (nothing is written) and turns what it refuses into plan errors. Without a cluster
// (cluster.clients nil), or without the right to ask, the plan goes on with one warning saying
// what was not checked.
//
// Objects of kinds that defined holds (the chart's CustomResourceDefinitions and crds_from) and
// the cluster does not serve yet are not dry-run: the plan checked them against those
// definitions, and one warning names them.
func (r *releaseResource) dryRunChanges(ctx context.Context, m, state *releaseModel, env *renderEnv, rendered *release.Rendering, cluster planCluster,
	defined map[k8sschema.GroupKind]bool, diags *diag.Diagnostics) {
	changed := changedObjects(m, state, env, rendered)
	if len(changed) == 0 {
		return
	}
	clients := cluster.clients
	if clients == nil {
		addDryRunSkipped(m, cluster.fields, "the cluster could not be reached: "+cluster.err.Error(), diags)
		return
	}
	runner, err := kube.NewDryRunner(clients)
	if err != nil {
		addDryRunSkipped(m, cluster.fields, err.Error(), diags)
		return
	}
	changed, notServed := notServedYet(clients, changed, defined)
	defer func() { addNotServedWarning(m, notServed, diags) }()
	namespace := m.Namespace.ValueString()
	ns, nsErr := clients.Kubernetes.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
	if kube.IsNotFound(nsErr) {
		// A new environment in the same plan: its namespace exists once the apply creates it.
		tflog.Info(ctx, "namespace does not exist yet; its objects are not dry-run", map[string]any{"release": m.releaseID()})
		changed = clusterScoped(changed, env)
	}
	outcomes := dryRunAll(ctx, runner, changed)
	var enforce string
	if nsErr == nil {
		enforce = ns.Labels[podSecurityEnforceLabel]
	}
	var notChecked []string
	sideEffects := map[string][]string{}
	for _, o := range outcomes {
		var unknownKind *kube.UnknownKindError
		if errors.As(o.err, &unknownKind) && defined[groupKindOf(unknownKind.APIVersion, unknownKind.Kind)] {
			// Discovery could not tell before the dry run; the dry run says it is not served yet.
			notServed = append(notServed, o.key)
			continue
		}
		var unsupported *kube.DryRunUnsupportedError
		if errors.As(o.err, &unsupported) {
			sideEffects[unsupported.Webhook] = append(sideEffects[unsupported.Webhook], o.key)
			continue
		}
		if reason := addDryRunDiagnostic(m, o, enforce, diags); reason != "" {
			notChecked = append(notChecked, reason)
		}
	}
	if len(notChecked) > 0 {
		addDryRunSkipped(m, cluster.fields, strings.Join(notChecked, "; "), diags)
	}
	addWebhooksNotCalled(m, sideEffects, diags)
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

// changedObjects returns the release's objects (hooks and CRDs aside: Helm recreates hooks
// and never upgrades CRDs) whose manifests the plan changes, in the namespace they go to.
func changedObjects(m, state *releaseModel, env *renderEnv, rendered *release.Rendering) []changedObject {
	redactor := redactorFor(m)
	namespace := m.Namespace.ValueString()
	previous := previousManifests(state)
	var out []changedObject
	for i, obj := range rendered.Rendered.Objects {
		key := redactor.Key(obj, namespace)
		if text, ok := previous[key]; ok && text == rendered.Manifests[key] {
			continue
		}
		copied, _ := manifest.DeepCopy(obj).(map[string]any)
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		if env.isNamespaced(apiVersion, kind) {
			if meta, ok := copied["metadata"].(map[string]any); ok && meta["namespace"] == nil {
				meta["namespace"] = namespace
			}
		}
		var source string
		if i < len(rendered.Rendered.ObjectSources) {
			source = rendered.Rendered.ObjectSources[i]
		}
		out = append(out, changedObject{key: key, source: source, object: copied})
	}
	return out
}

// clusterScoped keeps the objects that do not go into a namespace.
func clusterScoped(objs []changedObject, env *renderEnv) []changedObject {
	var out []changedObject
	for _, o := range objs {
		apiVersion, _ := o.object["apiVersion"].(string)
		kind, _ := o.object["kind"].(string)
		if !env.isNamespaced(apiVersion, kind) {
			out = append(out, o)
		}
	}
	return out
}

// dryRunAll dry-runs objs, a few at a time, and returns the outcomes in the order of objs.
func dryRunAll(ctx context.Context, runner *kube.DryRunner, objs []changedObject) []dryRunOutcome {
	outcomes := make([]dryRunOutcome, len(objs))
	limit := make(chan struct{}, dryRunConcurrency)
	var wg sync.WaitGroup
	for i, o := range objs {
		wg.Add(1)
		limit <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-limit }()
			result, err := runner.DryRunApply(ctx, o.object, helmrelease.FieldManager)
			outcomes[i] = dryRunOutcome{changedObject: o, result: result, err: err}
		}()
	}
	wg.Wait()
	return outcomes
}

// addDryRunDiagnostic reports one outcome. It returns, instead, why the object could not be
// checked when the dry run itself did not get an answer (RBAC, the network).
func addDryRunDiagnostic(m *releaseModel, o dryRunOutcome, enforce string, diags *diag.Diagnostics) string {
	d := m.diagnostics()
	at := path.Root("manifests").AtMapKey(o.key)
	object := o.key
	if o.source != "" {
		object += " (from " + o.source + ")"
	}
	var refused *kube.RefusedError
	var unknownKind *kube.UnknownKindError
	switch {
	case o.err == nil:
		addDryRunWarnings(m, o, object, enforce, diags)
	case errors.As(o.err, &refused) && refused.Immutable() && m.ForceReplace.ValueBool():
		diags.Append(d.AttributeWarning(at, "Object Will Be Replaced", fmt.Sprintf(
			"Release %s: the change to %s changes %s, which cannot change once the object exists. With force_replace, the apply "+
				"deletes the object and creates it again, which interrupts what it runs.\n\n%s",
			m.releaseID(), object, immutableFields(refused), refused.Message)))
	case errors.As(o.err, &refused) && refused.Immutable():
		diags.Append(d.AttributeError(at, "Immutable Field Changed", fmt.Sprintf(
			"Release %s: the API server would refuse the change to %s, because it changes %s, which cannot change once the object "+
				"exists. Delete the object and let the apply create it again (set force_replace = true on the release to have the apply do "+
				"it), or give the object a new name. Deleting it interrupts what it runs.\n\n%s",
			m.releaseID(), object, immutableFields(refused), refused.Message)))
	case errors.As(o.err, &refused) && refused.Webhook != "":
		diags.Append(d.AttributeError(at, "Object Refused by an Admission Webhook", fmt.Sprintf(
			"Release %s: admission webhook %q refused a server-side dry run of %s, so the apply would fail. Change the template or the "+
				"values so the object meets the cluster's policy, or ask the webhook's owners to allow it (kubectl get "+
				"validatingwebhookconfigurations,mutatingwebhookconfigurations names them). Nothing was written to the cluster.\n\n%s",
			m.releaseID(), refused.Webhook, object, refused.Message)))
	case errors.As(o.err, &refused):
		diags.Append(d.AttributeError(at, "Object Refused by the API Server", fmt.Sprintf(
			"Release %s: %s refused a server-side dry run of %s, so the apply would fail. Fix the template or the values that "+
				"produce it, or the namespace's policy (quota, Pod Security, admission policies) that refuses it.\n\n%s",
			m.releaseID(), refuser(refused), object, refused.Message)))
	case errors.As(o.err, &unknownKind):
		diags.Append(d.AttributeError(at, "Kind Not Served by the Cluster", fmt.Sprintf(
			"Release %s: the cluster serves no %s %s, so the apply of %s would fail. Install the CustomResourceDefinition first, or use "+
				"an API version the cluster serves (kubectl api-resources lists them).", m.releaseID(), unknownKind.APIVersion, unknownKind.Kind, object)))
	case kube.IsNamespaceNotFound(o.err):
		// The namespace went away between the check and the dry run; nothing to say.
	default:
		var forbidden *kube.ForbiddenError
		if errors.As(o.err, &forbidden) {
			return fmt.Sprintf("%s: %s is not permitted", object, forbidden.Verb)
		}
		return object + ": " + o.err.Error()
	}
	return ""
}

// addDryRunWarnings reports what the API server warned about. Pod Security warns, instead of
// refusing, about a workload whose pods the namespace's enforced level refuses: the pods would
// never be created, so that is an error.
func addDryRunWarnings(m *releaseModel, o dryRunOutcome, object, enforce string, diags *diag.Diagnostics) {
	d := m.diagnostics()
	at := path.Root("manifests").AtMapKey(o.key)
	var other []string
	for _, w := range o.result.Warnings {
		if level, ok := refusal.PodSecurityViolation(w); ok && enforce != "" && level == enforce {
			diags.Append(d.AttributeError(at, "Pods Refused by Pod Security", fmt.Sprintf(
				"Release %s: namespace %s enforces the %q Pod Security level, and the pods of %s would not meet it, so they would "+
					"never be created. Change the pod template (securityContext, volumes, host namespaces) to meet the level.\n\n%s",
				m.releaseID(), m.Namespace.ValueString(), enforce, object, w)))
			continue
		}
		other = append(other, w)
	}
	if len(other) > 0 {
		diags.Append(d.AttributeWarning(at, "API Server Warnings", fmt.Sprintf(
			"Release %s: a server-side dry run of %s was accepted with these warnings:\n  %s", m.releaseID(), object, strings.Join(other, "\n  "))))
	}
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

// replaceImmutable deletes, before the upgrade, each object whose change the API server
// refuses only because fields cannot change once set, and waits until it is gone, so that
// Helm's upgrade creates it again (force_replace). It reports false, with a diagnostic, when an
// object could not be deleted; nothing else has been changed then.
func (r *releaseResource) replaceImmutable(ctx context.Context, m *releaseModel, env *renderEnv, rendered *release.Rendering, diags *diag.Diagnostics) bool {
	d := m.diagnostics()
	clients, err := r.data.connect(ctx)
	if err != nil {
		diags.Append(d.Redacted(connectionDiagnostic(err, "replacing the immutable objects of release "+m.releaseID())))
		return false
	}
	runner, err := kube.NewDryRunner(clients)
	if err != nil {
		diags.Append(d.Error("Unable to Replace Objects", fmt.Sprintf("Release %s was not applied.\n\n%v", m.releaseID(), err)))
		return false
	}
	redactor := redactorFor(m)
	for _, o := range dryRunAll(ctx, runner, changedObjects(m, nil, env, rendered)) {
		var refused *kube.RefusedError
		if !errors.As(o.err, &refused) || !refused.Immutable() {
			continue
		}
		tflog.Info(ctx, "release "+m.releaseID()+": replacing "+o.key+": "+redactor.String(refused.Message), map[string]any{"release": m.releaseID()})
		err := clients.Delete(ctx, o.object, "")
		if err == nil {
			err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, m.timeoutDuration(), true, func(ctx context.Context) (bool, error) {
				_, err := clients.Get(ctx, o.object)
				if kube.IsNotFound(err) {
					return true, nil
				}
				return false, err
			})
		}
		if err != nil {
			diags.Append(d.Error("Unable to Replace Object", fmt.Sprintf(
				"Release %s was not upgraded: %s, whose change needs it replaced (force_replace), could not be deleted. Delete it by hand, "+
					"or give the identity the right to delete it, then apply again.\n\n%s", m.releaseID(), o.key, err.Error())))
			return false
		}
	}
	return true
}
