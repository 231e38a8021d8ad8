package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/environment"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// Read refreshes manifests from the cluster: for every object of the
// environment, the fields the provider manages as the cluster has them. An
// object edited outside Terraform shows as exactly that difference in the
// next plan, a deleted companion disappears from manifests (so the plan adds
// it back), and a namespace deleted outside Terraform removes the resource, so
// the next apply creates it again.
func (r *environmentResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state environmentModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	namespace := state.Namespace.ValueString()
	need := "reading the environment's namespace " + namespace
	// Outside an import the objects to read are the state's, the namespace among them: one
	// round of reads, several at once, sent while the connection's probe is under way. An
	// import learns from the namespace what else to read.
	importing := state.Manifests.IsNull()
	var cluster environmentCluster
	var candidates []readCandidate
	var lives []*unstructured.Unstructured
	var errs []error
	var ns *corev1.Namespace
	var err error
	if importing {
		if cluster = r.cluster(ctx, need, &resp.Diagnostics); cluster == nil {
			return
		}
		ns, err = cluster.GetNamespace(ctx, namespace)
	} else {
		var ok bool
		if candidates, ok = r.objectsToRead(ctx, nil, state, nil, false, &resp.Diagnostics); !ok {
			return
		}
		clients := r.data.readEarly(ctx, need, &resp.Diagnostics, func(ctx context.Context, c *kube.Clients) {
			lives, errs = c.GetAll(ctx, identitiesOf(candidates))
		})
		if clients == nil {
			return
		}
		cluster = clients
		ns, err = namespaceAmong(ctx, cluster, namespace, candidates, lives, errs)
	}
	if err != nil && !kube.IsNotFound(err) {
		resp.Diagnostics.Append(clusterErrorDiagnostic(ctx, cluster, "Unable to Read Environment",
			"Reading the namespace "+namespace+" failed.", "Check the connection and the provider's rights, then run Terraform again.", err))
		return
	}
	stateUID := state.UID.ValueString()
	if kube.IsNotFound(err) || (stateUID != "" && string(ns.UID) != stateUID) {
		// Gone, or gone and recreated by someone else: either way the
		// environment's namespace no longer exists, and the next apply
		// creates it (or refuses a foreign one of the same name).
		tflog.Info(ctx, "the environment's namespace is gone; removing it from the state so the next apply creates it", map[string]any{"namespace": namespace})
		resp.State.RemoveResource(ctx)
		return
	}
	if ns.DeletionTimestamp != nil {
		// Terminating: keep the resource, so a destroy run again waits for
		// the namespace to be gone, but hold no objects, so an apply plans
		// to create them all again once it is.
		tflog.Info(ctx, "the environment's namespace is terminating", map[string]any{"namespace": namespace})
		state.Manifests = types.MapValueMust(types.StringType, map[string]attr.Value{})
		resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
		return
	}

	if importing {
		r.fillImported(ctx, &state, ns)
		var ok bool
		if candidates, ok = r.objectsToRead(ctx, cluster, state, ns, true, &resp.Diagnostics); !ok {
			return
		}
		lives, errs = cluster.GetAll(ctx, identitiesOf(candidates))
	}
	owned := make([]manifest.Object, 0, len(candidates))
	for i, c := range candidates {
		live, err := lives[i], errs[i]
		if kube.IsNotFound(err) {
			tflog.Info(ctx, "an object of the environment was deleted outside Terraform; the next plan adds it back", map[string]any{"object": keyOf(c.identity, namespace)})
			continue
		}
		if err != nil {
			resp.Diagnostics.Append(clusterErrorDiagnostic(ctx, cluster, "Unable to Read Environment",
				fmt.Sprintf("Reading %s failed.", keyOf(c.identity, namespace)), "Check the connection and the provider's rights, then run Terraform again.", err))
			return
		}
		fields, err := kube.OwnedFields(live, c.intended)
		if err != nil {
			resp.Diagnostics.AddError("Unable to Read Environment", fmt.Sprintf(
				"The fields the provider manages in %s could not be extracted. This is a bug in the provider; please report it.\n\n%v", keyOf(c.identity, namespace), err))
			return
		}
		owned = append(owned, fields)
	}
	manifests, err := manifest.Manifests(owned, namespace, manifest.BuiltinIsNamespaced)
	if err != nil {
		resp.Diagnostics.AddError("Unable to Read Environment", "The environment's objects could not be rendered. This is a bug in the provider; please report it.\n\n"+err.Error())
		return
	}
	state.Manifests = types.MapValueMust(types.StringType, stringValues(manifests))
	state.UID = types.StringValue(string(ns.UID))
	state.ID = types.StringValue(namespace)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// readCandidate is an object Read looks for: its identity, and the object as
// last applied when the state has it.
type readCandidate struct {
	identity manifest.Object
	intended manifest.Object
}

// objectsToRead lists the objects of the state's manifests; right after an
// import, when there are none, the namespace and the companions under their
// default names that carry this environment's ownership marker.
func (r *environmentResource) objectsToRead(ctx context.Context, cluster environmentCluster, state environmentModel, ns *corev1.Namespace, importing bool, diags *diag.Diagnostics) ([]readCandidate, bool) {
	prior := manifestsAttribute(ctx, state, diags)
	if diags.HasError() {
		return nil, false
	}
	var candidates []readCandidate
	if !importing {
		for _, key := range slices.Sorted(maps.Keys(prior)) {
			obj, err := objectOfManifest(prior[key])
			if err != nil {
				diags.AddError("Unable to Read Environment", fmt.Sprintf(
					"The manifest of %s in the state cannot be read. Run terraform apply -refresh=false to write it again.\n\n%v", key, err))
				return nil, false
			}
			candidates = append(candidates, readCandidate{identity: obj, intended: obj})
		}
		return candidates, true
	}
	envName := state.Name.ValueString()
	importable := environment.ImportCandidates(ns.Name)
	candidates = append(candidates, readCandidate{identity: importable[0]}) // the namespace
	lives, errs := cluster.GetAll(ctx, importable[1:])
	for i, obj := range importable[1:] {
		live, err := lives[i], errs[i]
		if kube.IsNotFound(err) {
			continue
		}
		if err != nil {
			diags.Append(clusterErrorDiagnostic(ctx, cluster, "Unable to Import Environment",
				fmt.Sprintf("Reading %s failed.", keyOf(obj, ns.Name)), "Check the provider's rights, then import again.", err))
			return nil, false
		}
		if envName != "" && gitlab.OwnedBy(live.GetAnnotations(), live.GetLabels(), envName) {
			candidates = append(candidates, readCandidate{identity: obj})
		}
	}
	return candidates, true
}

// fillImported sets what an import learns from the namespace itself: the
// environment's name from the ownership annotation, and the labels and
// annotations the provider's field manager set beyond its own.
func (r *environmentResource) fillImported(ctx context.Context, state *environmentModel, ns *corev1.Namespace) {
	state.RetainOnDestroy = types.BoolValue(false)
	name := ns.Annotations[gitlab.AnnotationEnvironment]
	if name == "" || ns.Labels[gitlab.LabelManagedBy] != gitlab.ManagedByValue {
		// Not made by this provider: the configuration names the environment,
		// and the next apply writes the marker.
		tflog.Info(ctx, "importing a namespace without an ownership marker; the next apply adopts it", map[string]any{"namespace": ns.Name})
		return
	}
	state.Name = types.StringValue(name)
	ci := r.data.ci
	state.Slug = types.StringValue(gitlab.SlugFor(name, ci))
	if slug := ns.Labels[gitlab.LabelEnvironmentSlug]; slug != "" {
		state.Slug = types.StringValue(slug)
	}

	fields, err := kube.OwnedFields(namespaceObject(ns), nil)
	if err != nil {
		tflog.Warn(ctx, "cannot tell which labels the provider set on the imported namespace", map[string]any{"error": err.Error()})
		return
	}
	metadata, _ := fields["metadata"].(map[string]any)
	state.Labels = stringMapValue(userEntries(metadata["labels"], environment.ProviderLabels))
	state.Annotations = stringMapValue(userEntries(metadata["annotations"], environment.ProviderAnnotations))
}

// userEntries returns the entries of a labels or annotations map that the
// provider does not set itself.
func userEntries(v any, providerKeys []string) map[string]string {
	m, _ := v.(map[string]any)
	out := map[string]string{}
	for k, val := range m {
		if s, ok := val.(string); ok && !slices.Contains(providerKeys, k) {
			out[k] = s
		}
	}
	return out
}

// importUIDSeparator separates the namespace from the UID it must have in an
// import ID; neither a namespace name nor a UID can contain it.
const importUIDSeparator = "@"

// ImportState adopts an existing namespace: `terraform import
// gitlabk8s_environment.<name> <namespace>`, or `<namespace>@<uid>` to adopt
// that very namespace only (what gitlabk8s_namespaces' import_id gives a
// janitor, so a namespace deleted and created again by someone else since it
// was listed is never adopted). A namespace created by this provider is read
// back completely; any other is adopted by the next apply, which writes the
// ownership marker; until then its UID, recorded in the state, is what shows
// it is this environment's.
func (r *environmentResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	namespace, wantUID, pinned := strings.Cut(strings.TrimSpace(req.ID), importUIDSeparator)
	if problems := environment.ValidateNamespace(namespace); len(problems) > 0 {
		resp.Diagnostics.AddError("Invalid Import ID", fmt.Sprintf(
			"The import ID must be the name of the environment's namespace, optionally followed by %s and its UID, e.g. terraform import gitlabk8s_environment.review review-feature-x. %s",
			importUIDSeparator, problems[0].Detail))
		return
	}
	if pinned && wantUID == "" {
		resp.Diagnostics.AddError("Invalid Import ID", fmt.Sprintf(
			"The import ID %q ends with %s but names no UID. Use <namespace>%s<uid> (kubectl get namespace %s -o jsonpath='{.metadata.uid}'), or the namespace's name alone.",
			req.ID, importUIDSeparator, importUIDSeparator, namespace))
		return
	}
	cluster := r.cluster(ctx, "importing the namespace "+namespace, &resp.Diagnostics)
	if cluster == nil {
		return
	}
	ns, err := cluster.GetNamespace(ctx, namespace)
	if kube.IsNotFound(err) {
		resp.Diagnostics.AddError("Cannot Import Missing Namespace", fmt.Sprintf(
			"The namespace %s does not exist on %s. Check the name (kubectl get namespaces); a new environment needs no import.", namespace, r.data.conn.Describe()))
		return
	}
	if err != nil {
		resp.Diagnostics.Append(clusterErrorDiagnostic(ctx, cluster, "Unable to Import Environment",
			"Reading the namespace "+namespace+" failed.", "Check the connection and the provider's rights, then import again.", err))
		return
	}
	if ns.DeletionTimestamp != nil {
		resp.Diagnostics.AddError("Cannot Import Terminating Namespace", fmt.Sprintf("The namespace %s is being deleted; there is nothing to adopt.", namespace))
		return
	}
	if pinned && string(ns.UID) != wantUID {
		resp.Diagnostics.AddError("Namespace Changed Since It Was Listed", fmt.Sprintf(
			"The namespace %s has the UID %s, not %s as the import ID says: it was deleted and created again since its UID was read, "+
				"so it may not be the namespace meant, and nothing was imported. List the namespaces again (run Terraform again) and adopt what is there now.",
			namespace, ns.UID, wantUID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), namespace)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), namespace)...)
}

func identitiesOf(candidates []readCandidate) []map[string]any {
	identities := make([]map[string]any, len(candidates))
	for i, c := range candidates {
		identities[i] = c.identity
	}
	return identities
}

// namespaceAmong is the environment's namespace as read with the other candidates, or read on
// its own when the state's manifests do not hold it.
func namespaceAmong(ctx context.Context, cluster environmentCluster, name string, candidates []readCandidate, lives []*unstructured.Unstructured, errs []error) (*corev1.Namespace, error) {
	for i, c := range candidates {
		u := unstructured.Unstructured{Object: c.identity}
		if u.GetAPIVersion() != "v1" || u.GetKind() != "Namespace" || u.GetName() != name {
			continue
		}
		if errs[i] != nil {
			return nil, errs[i]
		}
		ns := &corev1.Namespace{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(lives[i].Object, ns); err != nil {
			return nil, fmt.Errorf("read namespace %s: %w", name, err)
		}
		return ns, nil
	}
	return cluster.GetNamespace(ctx, name)
}
