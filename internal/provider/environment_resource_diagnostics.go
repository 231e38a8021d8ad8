package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	corev1 "k8s.io/api/core/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/refusal"
)

// This file words the environment resource's diagnostics.

// identityOf names the identity the cluster sees, for permission errors; it
// never fails, as it only decorates another error.
func identityOf(ctx context.Context, cluster environmentCluster) string {
	user, err := cluster.WhoAmI(ctx)
	if err != nil || user == "" {
		return "the provider's identity (the API server did not say which)"
	}
	return fmt.Sprintf("%q", user)
}

// grantHint shows the kubectl commands that give identity the verb on the
// resource inside namespace.
func grantHint(identity, verb, resource, namespace string) string {
	subject := "--user=" + identity
	if rest, ok := strings.CutPrefix(identity, "system:serviceaccount:"); ok {
		subject = "--serviceaccount=" + rest
	}
	role := "gitlabk8s-" + strings.ReplaceAll(verb, ",", "-") + "-" + strings.ReplaceAll(resource, ".", "-")
	return fmt.Sprintf("  kubectl create clusterrole %s --verb=%s --resource=%s\n  kubectl create rolebinding %s --namespace=%s --clusterrole=%s %s",
		role, verb, resource, role, namespace, role, subject)
}

// forbiddenDiagnostic explains an RBAC refusal while applying or reading an
// environment's objects: what was being done, who may not do what, how to
// grant it, and what happens next.
func forbiddenDiagnostic(ctx context.Context, cluster environmentCluster, summary, what, todo string, f *kube.ForbiddenError) diag.Diagnostic {
	identity := identityOf(ctx, cluster)
	resource := f.Resource
	if f.Group != "" {
		resource += "." + f.Group
	}
	verbs := f.Verb
	if f.Verb == "patch" {
		// Server-side apply patches, and creates what does not exist yet.
		verbs = "create,patch"
	}
	return diag.NewErrorDiagnostic(summary, fmt.Sprintf(
		"%s The identity %s may not %s %s: RBAC refuses the verb %q on the resource %q. "+
			"Grant the right to that identity (or configure the provider with one that has it), for example:\n%s\n%s\n\n%v",
		what, identity, f.Verb, f.Object(), f.Verb, resource, grantHint(strings.Trim(identity, `"`), verbs, resource, f.Namespace), todo, f.Err))
}

// clusterErrorDiagnostic words a failure talking to the cluster: what was
// being done, what the user can do, then the error.
func clusterErrorDiagnostic(ctx context.Context, cluster environmentCluster, summary, what, todo string, err error) diag.Diagnostic {
	if f, ok := kube.AsForbidden(err); ok {
		return forbiddenDiagnostic(ctx, cluster, summary, what, todo, f)
	}
	var refused *kube.RefusedError
	if errors.As(err, &refused) && refused.Class != refusal.Other {
		return diag.NewErrorDiagnostic(summary, fmt.Sprintf("%s It was refused by %s, not for lack of rights: "+
			"change the configuration so the object meets what the message below asks, or ask the cluster's administrators about the rule. %s\n\n%v",
			what, refuser(refused), todo, err))
	}
	return diag.NewErrorDiagnostic(summary, fmt.Sprintf("%s %s\n\n%v", what, todo, err))
}

// foreignNamespaceDiagnostic refuses to take over a namespace the provider did
// not create for this environment.
func foreignNamespaceDiagnostic(ns *corev1.Namespace, envName string) diag.Diagnostic {
	owner := "It does not carry the provider's ownership marker (the label " + gitlab.LabelManagedBy + "=" + gitlab.ManagedByValue +
		" and the annotation " + gitlab.AnnotationEnvironment + "), so it was created by someone else."
	if other := ns.Annotations[gitlab.AnnotationEnvironment]; other != "" && ns.Labels[gitlab.LabelManagedBy] == gitlab.ManagedByValue {
		owner = fmt.Sprintf("It belongs to the GitLab environment %q.", other)
	}
	return diag.NewErrorDiagnostic("Namespace Belongs to Someone Else", fmt.Sprintf(
		"The namespace %s already exists and was not created for the environment %q; the provider never takes over or deletes such a namespace. %s\n\n"+
			"To manage it with this resource (and delete it on destroy), adopt it first:\n"+
			"  terraform import gitlabk8s_environment.<resource name> %s\n"+
			"Otherwise choose another namespace with the namespace attribute.",
		ns.Name, envName, owner, ns.Name))
}

// deleteRefusedDiagnostic refuses to delete a namespace not marked as this
// environment's.
func deleteRefusedDiagnostic(ns *corev1.Namespace, envName string) diag.Diagnostic {
	return diag.NewErrorDiagnostic("Refusing to Delete Namespace", fmt.Sprintf(
		"The namespace %s does not carry the ownership marker of the environment %q (the label %s=%s and the annotation %s=%q), "+
			"so the provider does not delete it: it may have been recreated or taken over by someone else since. The namespace and the Terraform state were kept.\n\n"+
			"If the namespace is this environment's, run terraform apply first to mark it again, then destroy. "+
			"To stop managing it without deleting it, run: terraform state rm <resource address>.\n\n"+
			"Current labels: %v\nCurrent annotations: %v",
		ns.Name, envName, gitlab.LabelManagedBy, gitlab.ManagedByValue, gitlab.AnnotationEnvironment, envName, ns.Labels, ns.Annotations))
}

// deleteForbiddenDiagnostic explains that the identity may not delete the
// namespace, that nothing was lost, and how to grant the right.
func deleteForbiddenDiagnostic(ctx context.Context, cluster environmentCluster, namespace string, f *kube.ForbiddenError) diag.Diagnostic {
	identity := identityOf(ctx, cluster)
	return diag.NewErrorDiagnostic("Unable to Delete Namespace", fmt.Sprintf(
		"The identity %s may not delete the namespace %s: RBAC refuses the verb \"delete\" on the resource \"namespaces\" (core API group) for %s. "+
			"The namespace and the Terraform state were both kept, so nothing is lost.\n\n"+
			"Grant the right and run destroy again. A RoleBinding in the namespace itself is enough, because for a namespace RBAC checks the rights "+
			"granted inside that namespace, for example:\n%s\n"+
			"(GitLab agent CI identities usually lack this right; alternatively run destroy with an identity that has it.)\n\n%v",
		identity, namespace, f.Object(), grantHint(strings.Trim(identity, `"`), "delete", "namespaces", namespace), f.Err))
}

// namespaceStuckDiagnostic names what keeps a namespace from going away.
func namespaceStuckDiagnostic(namespace string, err error) diag.Diagnostic {
	var stuck *kube.NamespaceStuckError
	if !errors.As(err, &stuck) {
		return diag.NewErrorDiagnostic("Unable to Delete Namespace", fmt.Sprintf(
			"Waiting for the namespace %s to be deleted failed. Run destroy again to keep waiting.\n\n%v", namespace, err))
	}
	blockers := "The namespace reports no reason."
	if len(stuck.Blockers) > 0 {
		blockers = "What blocks it:\n  - " + strings.Join(stuck.Blockers, "\n  - ")
	}
	if len(stuck.Unavailable) > 0 || errors.Is(err, kube.ErrDiscoveryBlocked) {
		return discoveryBlockedDiagnostic(namespace, stuck, blockers, err)
	}
	return diag.NewErrorDiagnostic("Namespace Deletion Timed Out", fmt.Sprintf(
		"The namespace %s is being deleted but was still there after %s. %s\n\n"+
			"Resources whose finalizers are never removed (often because the controller that handles them is gone) keep a namespace forever; "+
			"remove those finalizers or fix their controller, or raise timeouts.delete. The Terraform state was kept: run destroy again to keep waiting.\n\n%v",
		namespace, stuck.Waited.Round(1e9), blockers, err))
}

// discoveryBlockedDiagnostic explains a namespace the namespace controller cannot empty because
// an aggregated API does not answer, and names those APIs.
func discoveryBlockedDiagnostic(namespace string, stuck *kube.NamespaceStuckError, blockers string, err error) diag.Diagnostic {
	waited := fmt.Sprintf("was still there after %s", stuck.Waited.Round(1e9))
	if errors.Is(err, kube.ErrDiscoveryBlocked) {
		waited = fmt.Sprintf("has reported for %s that discovery failed", kube.DiscoveryFailureGrace)
	}
	apis := "No APIService reported itself unavailable when the namespace was read; one may have answered again since."
	var names []string
	if len(stuck.Unavailable) > 0 {
		var lines []string
		for _, u := range stuck.Unavailable {
			line := "APIService " + u.Name
			if u.Service != "" {
				line += " (Service " + u.Service + ")"
			}
			if why := joinNonEmpty(": ", u.Reason, u.Message); why != "" {
				line += ": " + why
			}
			lines = append(lines, line)
			names = append(names, u.Name)
		}
		apis = "These aggregated APIs do not answer:\n  - " + strings.Join(lines, "\n  - ")
	}
	remedy := "kubectl delete apiservice <name>"
	if len(names) > 0 {
		remedy = "kubectl delete apiservice " + strings.Join(names, " ")
	}
	return diag.NewErrorDiagnostic("Namespace Deletion Blocked by an Unavailable API", fmt.Sprintf(
		"The namespace %s is being deleted and %s. Before it deletes a namespace's content, the namespace controller lists every kind the cluster "+
			"serves; while an aggregated API (an APIService, such as a metrics adapter's) does not answer, it deletes the content of no namespace in the cluster, "+
			"however long one waits.\n\n%s\n\n"+
			"Start what serves them again (the pods behind their Service), or, if the add-on that registered them is gone, remove them: %s. "+
			"The namespace controller then deletes the namespace within a minute or so. The Terraform state was kept: run destroy again.\n\n%s\n\n%v",
		namespace, waited, apis, remedy, blockers, err))
}

// joinNonEmpty joins the parts that are not empty with sep.
func joinNonEmpty(sep string, parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, sep)
}
