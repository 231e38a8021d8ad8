package provider

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/environment"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// environmentCluster is the cluster I/O the environment resource needs.
type environmentCluster interface {
	Apply(ctx context.Context, obj map[string]any) (*unstructured.Unstructured, error)
	Get(ctx context.Context, obj map[string]any) (*unstructured.Unstructured, error)
	GetAll(ctx context.Context, objs []map[string]any) ([]*unstructured.Unstructured, []error)
	Delete(ctx context.Context, obj map[string]any, uid k8stypes.UID) error
	GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error)
	DeleteNamespace(ctx context.Context, name string, uid k8stypes.UID) error
	WaitForNamespaceDeletion(ctx context.Context, name string, uid k8stypes.UID) error
	WhoAmI(ctx context.Context) (string, error)
}

var _ environmentCluster = (*kube.Clients)(nil)

func (r *environmentResource) cluster(ctx context.Context, need string, diags *diag.Diagnostics) environmentCluster {
	c := r.data.clients(ctx, need, diags)
	if c == nil {
		return nil
	}
	return c
}

// build turns planned values into the environment to apply.
func (r *environmentResource) build(ctx context.Context, plan environmentModel, diags *diag.Diagnostics) (environment.Environment, bool) {
	spec, parts, d := plan.spec(ctx)
	diags.Append(d...)
	if diags.HasError() {
		return environment.Environment{}, false
	}
	if !parts.all() {
		diags.AddError("Unknown Environment Configuration", "Some of the environment's settings are still unknown at apply. This is a bug in the provider; please report it.")
		return environment.Environment{}, false
	}
	ci := r.data.ci
	env, problems := environment.Build(spec, ci)
	addProblems(diags, problems)
	return env, len(problems) == 0
}

// ownedByEnvironment reports whether the namespace is this environment's: it
// carries the ownership marker of one of names (the environment's name before
// and after a rename), or it is the very namespace the state recorded (same
// UID: created or imported by this resource) and no other environment claims
// it. A namespace deleted and recreated by someone else has a new UID.
func ownedByEnvironment(ns *corev1.Namespace, stateUID string, names ...string) bool {
	for _, name := range names {
		if gitlab.OwnedBy(ns.Annotations, ns.Labels, name) {
			return true
		}
	}
	claimed := ns.Labels[gitlab.LabelManagedBy] == gitlab.ManagedByValue && ns.Annotations[gitlab.AnnotationEnvironment] != ""
	return stateUID != "" && string(ns.UID) == stateUID && !claimed
}

func (r *environmentResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan environmentModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultEnvironmentCreateTimeout)
	resp.Diagnostics.Append(diags...)
	env, ok := r.build(ctx, plan, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cluster := r.cluster(ctx, "creating the environment "+env.Name, &resp.Diagnostics)
	if cluster == nil {
		return
	}

	owned := func(ns *corev1.Namespace) bool { return gitlab.OwnedBy(ns.Annotations, ns.Labels, env.Name) }
	if !prepareNamespace(ctx, cluster, env, owned, "Unable to Create Environment",
		"Checking whether the namespace "+env.Namespace+" already exists failed.", &resp.Diagnostics) {
		return
	}

	uid, ok := r.applyObjects(ctx, cluster, env, true, &resp.Diagnostics)
	if !ok {
		return
	}
	plan.UID = types.StringValue(string(uid))
	plan.ID = types.StringValue(env.Namespace)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *environmentResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state environmentModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, defaultEnvironmentUpdateTimeout)
	resp.Diagnostics.Append(diags...)
	env, ok := r.build(ctx, plan, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cluster := r.cluster(ctx, "updating the environment "+env.Name, &resp.Diagnostics)
	if cluster == nil {
		return
	}

	owned := func(ns *corev1.Namespace) bool {
		return ownedByEnvironment(ns, state.UID.ValueString(), state.Name.ValueString(), env.Name)
	}
	if !prepareNamespace(ctx, cluster, env, owned, "Unable to Update Environment",
		"Reading the namespace "+env.Namespace+" failed.", &resp.Diagnostics) {
		return
	}

	uid, ok := r.applyObjects(ctx, cluster, env, false, &resp.Diagnostics)
	if ok {
		r.deleteDropped(ctx, cluster, state, plan, &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		keepHalfRename(ctx, cluster, state, plan, &resp.State, &resp.Diagnostics)
		return
	}
	plan.UID = types.StringValue(string(uid))
	plan.ID = types.StringValue(env.Namespace)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// keepHalfRename records a rename that failed part way. The namespace is applied first, so it
// may already carry the new name's ownership marker while the state, kept as it was, names the
// old one; reverting the configuration or destroying would then find the namespace claimed by
// another environment and refuse. When the namespace the state recorded (same UID) now carries
// the new name's marker, the state takes the new name and slug, so the next apply (either name)
// and destroy recognise it; everything else keeps its value from before the update, so the next
// plan shows the rest of the change again.
func keepHalfRename(ctx context.Context, cluster environmentCluster, state, plan environmentModel, st *tfsdk.State, diags *diag.Diagnostics) {
	if state.Name.Equal(plan.Name) || !state.Namespace.Equal(plan.Namespace) {
		return
	}
	// The update's own context may be what ran out.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupReadTimeout)
	defer cancel()
	ns, err := cluster.GetNamespace(ctx, state.Namespace.ValueString())
	if err != nil || string(ns.UID) != state.UID.ValueString() || !gitlab.OwnedBy(ns.Annotations, ns.Labels, plan.Name.ValueString()) {
		return
	}
	tflog.Info(ctx, "the failed update had already marked the namespace with the environment's new name; recording the new name", map[string]any{"namespace": ns.Name})
	partial := state
	partial.Name, partial.Slug = plan.Name, plan.Slug
	diags.Append(st.Set(ctx, &partial)...)
}

// prepareNamespace makes the environment's namespace ready to apply to: absent (it is
// created), or present and owned, as owned decides. A namespace of ours that is still
// terminating (a destroy that timed out, a deletion outside Terraform) is waited for, so the
// environment is created afresh once it is gone. It adds a diagnostic and returns false when
// the apply must not go on.
func prepareNamespace(ctx context.Context, cluster environmentCluster, env environment.Environment, owned func(*corev1.Namespace) bool, summary, readFailed string, diags *diag.Diagnostics) bool {
	existing, err := cluster.GetNamespace(ctx, env.Namespace)
	switch {
	case kube.IsNotFound(err):
		return true
	case err != nil:
		diags.Append(clusterErrorDiagnostic(ctx, cluster, summary, readFailed, "Check the connection and the provider's rights, then apply again.", err))
		return false
	case !owned(existing):
		diags.Append(foreignNamespaceDiagnostic(existing, env.Name))
		return false
	case existing.DeletionTimestamp != nil:
		tflog.Info(ctx, "waiting for the environment's terminating namespace to be gone before creating it again", map[string]any{"namespace": env.Namespace})
		if err := cluster.WaitForNamespaceDeletion(ctx, env.Namespace, existing.UID); err != nil {
			diags.Append(namespaceStuckDiagnostic(env.Namespace, err))
			return false
		}
		return true
	default:
		return true
	}
}

// applyObjects applies the environment's objects in order and returns the
// namespace's UID. creating says whether this is the environment's first
// apply, which writes no state when it fails.
func (r *environmentResource) applyObjects(ctx context.Context, cluster environmentCluster, env environment.Environment, creating bool, diags *diag.Diagnostics) (k8stypes.UID, bool) {
	var uid k8stypes.UID
	bound := false
	for i, obj := range env.Objects {
		key := keyOf(obj, env.Namespace)
		applied, err := cluster.Apply(ctx, obj)
		if _, refused := kube.AsForbidden(err); refused && bound {
			applied, err = applyOnceBindingHolds(ctx, cluster, obj, err)
		}
		if err != nil {
			todo := "Fix the cause and apply again; the objects applied so far are kept."
			if creating && i > 0 {
				todo = fmt.Sprintf("The namespace %s was created and carries this environment's ownership marker, so the next apply adopts it and continues where this one stopped.", env.Namespace)
			}
			diags.Append(clusterErrorDiagnostic(ctx, cluster, "Unable to Apply Environment Object",
				fmt.Sprintf("Applying %s of the environment %q failed.", key, env.Name), todo, err))
			return "", false
		}
		if i == 0 {
			uid = applied.GetUID()
		}
		bound = bound || isCIJobRoleBinding(obj)
		tflog.Debug(ctx, "applied environment object", map[string]any{"object": key})
	}
	return uid, true
}

// rbacPropagation bounds how long the API server's authorizer may take to see a RoleBinding
// just written: until it does, the rights the binding grants are refused.
const rbacPropagation = 10 * time.Second

// applyOnceBindingHolds retries an apply that RBAC refused right after the CI jobs' RoleBinding
// was applied, for as long as a new binding may take to count. It returns the last answer.
func applyOnceBindingHolds(ctx context.Context, cluster environmentCluster, obj manifest.Object, refusal error) (*unstructured.Unstructured, error) {
	var applied *unstructured.Unstructured
	err := refusal
	_ = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, rbacPropagation, false, func(ctx context.Context) (bool, error) {
		applied, err = cluster.Apply(ctx, obj)
		_, refused := kube.AsForbidden(err)
		return !refused, nil
	})
	return applied, err
}

func isCIJobRoleBinding(obj manifest.Object) bool {
	u := unstructured.Unstructured{Object: obj}
	return u.GetKind() == "RoleBinding" && u.GetName() == environment.CIJobRoleBindingName
}

// keyOf is the manifests key of obj.
func keyOf(obj manifest.Object, namespace string) string {
	u := unstructured.Unstructured{Object: obj}
	return manifest.Key(manifest.Normalize(obj, namespace, manifest.BuiltinIsNamespaced(u.GetAPIVersion(), u.GetKind())), namespace)
}

// deleteDropped deletes the objects the state holds and the plan no longer
// does (a disabled NetworkPolicy, a renamed ServiceAccount), when they still
// carry this environment's ownership marker.
func (r *environmentResource) deleteDropped(ctx context.Context, cluster environmentCluster, state, plan environmentModel, diags *diag.Diagnostics) {
	before, after := manifestsAttribute(ctx, state, diags), manifestsAttribute(ctx, plan, diags)
	keys := make([]string, 0, len(before))
	for key := range before {
		if _, kept := after[key]; !kept {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	for _, key := range keys {
		obj, err := objectOfManifest(before[key])
		if err != nil {
			tflog.Warn(ctx, "cannot read a dropped object's manifest from the state; leaving the object alone", map[string]any{"object": key, "error": err.Error()})
			continue
		}
		if (&unstructured.Unstructured{Object: obj}).GetKind() == "Namespace" {
			continue // the namespace changes only by replacement
		}
		live, err := cluster.Get(ctx, obj)
		if kube.IsNotFound(err) {
			continue
		}
		if err != nil {
			diags.Append(clusterErrorDiagnostic(ctx, cluster, "Unable to Delete Environment Object",
				fmt.Sprintf("Reading %s, which the configuration no longer has, failed.", key), "Apply again to retry.", err))
			return
		}
		if !gitlab.OwnedBy(live.GetAnnotations(), live.GetLabels(), state.Name.ValueString()) && !gitlab.OwnedBy(live.GetAnnotations(), live.GetLabels(), plan.Name.ValueString()) {
			tflog.Warn(ctx, "not deleting a dropped object that no longer carries the environment's ownership marker", map[string]any{"object": key})
			continue
		}
		if err := cluster.Delete(ctx, obj, live.GetUID()); err != nil {
			diags.Append(clusterErrorDiagnostic(ctx, cluster, "Unable to Delete Environment Object",
				fmt.Sprintf("Deleting %s, which the configuration no longer has, failed.", key), "Apply again to retry.", err))
			return
		}
		tflog.Debug(ctx, "deleted dropped environment object", map[string]any{"object": key})
	}
}

func manifestsAttribute(ctx context.Context, m environmentModel, diags *diag.Diagnostics) map[string]string {
	out := map[string]string{}
	if m.Manifests.IsNull() || m.Manifests.IsUnknown() {
		return out
	}
	diags.Append(m.Manifests.ElementsAs(ctx, &out, false)...)
	return out
}

// objectOfManifest parses one manifest of the manifests attribute.
func objectOfManifest(text string) (manifest.Object, error) {
	objs, err := manifest.SplitDocuments(text)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 {
		return nil, fmt.Errorf("expected one object, found %d", len(objs))
	}
	return objs[0], nil
}
