package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
)

// Delete deletes the environment's namespace, and with it everything inside,
// and waits until it is really gone, within timeouts.delete. It deletes only a
// namespace that carries this environment's ownership marker or is the very
// namespace the state recorded (same UID), and never a protected one. When the
// identity may not delete namespaces, both the namespace and the state stay.
func (r *environmentResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state environmentModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	namespace := state.Namespace.ValueString()
	if state.RetainOnDestroy.ValueBool() {
		tflog.Info(ctx, "retain_on_destroy is set: keeping the namespace, removing the environment from the state only", map[string]any{"namespace": namespace})
		return
	}
	if gitlab.IsProtectedNamespace(namespace) {
		resp.Diagnostics.AddError("Refusing to Delete Namespace", "The namespace "+namespace+" is one Kubernetes itself relies on; the provider never deletes it. "+
			"Run terraform state rm <resource address> to stop managing it.")
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, defaultEnvironmentDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cluster := r.cluster(ctx, "deleting the environment's namespace "+namespace, &resp.Diagnostics)
	if cluster == nil {
		return
	}

	ns, err := cluster.GetNamespace(ctx, namespace)
	if kube.IsNotFound(err) {
		tflog.Info(ctx, "the environment's namespace is already gone", map[string]any{"namespace": namespace})
		return
	}
	if err != nil {
		resp.Diagnostics.Append(clusterErrorDiagnostic(ctx, cluster, "Unable to Delete Namespace",
			"Reading the namespace "+namespace+" before deleting it failed; nothing was deleted and the state was kept.", "Check the connection and the provider's rights, then destroy again.", err))
		return
	}
	if !ownedByEnvironment(ns, state.UID.ValueString(), state.Name.ValueString()) {
		resp.Diagnostics.Append(deleteRefusedDiagnostic(ns, state.Name.ValueString()))
		return
	}
	if ns.DeletionTimestamp == nil {
		if err := cluster.DeleteNamespace(ctx, namespace, ns.UID); err != nil {
			if f, ok := kube.AsForbidden(err); ok {
				resp.Diagnostics.Append(deleteForbiddenDiagnostic(ctx, cluster, namespace, f))
				return
			}
			resp.Diagnostics.Append(clusterErrorDiagnostic(ctx, cluster, "Unable to Delete Namespace",
				"Deleting the namespace "+namespace+" failed; the state was kept.", "Destroy again to retry.", err))
			return
		}
	}
	tflog.Info(ctx, "waiting for the environment's namespace to be deleted", map[string]any{"namespace": namespace, "timeout": timeout.String()})
	if err := cluster.WaitForNamespaceDeletion(ctx, namespace, ns.UID); err != nil {
		resp.Diagnostics.Append(namespaceStuckDiagnostic(namespace, err))
	}
}

// namespaceObject converts a typed Namespace into the unstructured form
// kube.OwnedFields reads.
func namespaceObject(ns *corev1.Namespace) *unstructured.Unstructured {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ns)
	if err != nil {
		obj = map[string]any{}
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion("v1")
	u.SetKind("Namespace")
	return u
}
