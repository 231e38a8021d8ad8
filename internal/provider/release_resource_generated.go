package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// generatedPrivateKey names the resource's private state entry that holds, as JSON, the
// documents of the last apply whose templates generate values, so that a plan without the
// cluster still takes those values from the last apply.
const generatedPrivateKey = "generated_documents"

// privateGetter and privateSetter are the framework's private state, as plan and apply use it.
type (
	privateGetter interface {
		GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
	}
	privateSetter interface {
		SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
	}
)

// priorDocuments returns what the release applied last, which a rendering takes generated
// values from: the release Helm recorded when the cluster is reachable, else the documents
// the last apply kept in private state.
func priorDocuments(ctx context.Context, env *renderEnv, m *releaseModel, private privateGetter) []chart.Document {
	if env.client != nil {
		last, err := env.client.Get(ctx, m.Namespace.ValueString(), m.Name.ValueString())
		if err == nil {
			return helmrelease.Applied(last)
		}
		if errors.Is(err, helmrelease.ErrNotFound) {
			return nil
		}
		tflog.Warn(ctx, "release history unreadable; generated values come from the last apply", map[string]any{"release": m.releaseID(), "error": redactorFor(m).String(err.Error())})
	}
	if private == nil {
		return nil
	}
	data, _ := private.GetKey(ctx, generatedPrivateKey)
	var docs []chart.Document
	if len(data) > 0 && json.Unmarshal(data, &docs) != nil {
		return nil // an unreadable entry only costs the values it held
	}
	return docs
}

// keepGenerated records in private state the templates of r whose output holds generated
// values, for the next plan that cannot read the release from the cluster.
func keepGenerated(ctx context.Context, private privateSetter, r *chart.Rendered) diag.Diagnostics {
	if private == nil {
		return nil
	}
	docs := make([]chart.Document, 0, len(r.Varying))
	for _, source := range r.Varying {
		docs = append(docs, chart.Document{Source: source, Text: r.Files[source]})
	}
	if len(docs) == 0 {
		return private.SetKey(ctx, generatedPrivateKey, nil)
	}
	data, err := json.Marshal(docs)
	if err != nil {
		var diags diag.Diagnostics
		diags.AddError("Unable to Record Generated Values", fmt.Sprintf("The generated values of the release could not be encoded.\n\n%v", err))
		return diags
	}
	return private.SetKey(ctx, generatedPrivateKey, data)
}

// generatedKeys returns the keys of the objects of rendered that hold values the chart
// generated afresh, which a plan cannot show.
func generatedKeys(rendered *chart.Rendered, namespace string, isNamespaced func(apiVersion, kind string) bool) []string {
	keys, err := manifest.NewRedactor(nil).Keys(rendered.Generated, namespace, isNamespaced)
	if err != nil {
		return nil // the rendering's own manifests already passed the same check
	}
	out := make([]string, 0, len(keys))
	for k := range keys {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// plannedElements are the manifests of a plan: known for what the plan can show, unknown
// for what holds values generated afresh, or unknown altogether when generated values name
// objects.
func plannedElements(r *rendering) (types.Map, diag.Diagnostics) {
	if r.rendered.NamesGenerated {
		return types.MapUnknown(types.StringType), nil
	}
	elems := make(map[string]attr.Value, len(r.manifests))
	for k, v := range r.manifests {
		elems[k] = types.StringValue(v)
	}
	for _, k := range r.generated {
		if _, ok := elems[k]; ok {
			elems[k] = types.StringUnknown()
		}
	}
	return types.MapValue(types.StringType, elems)
}

// checkPlanned compares what the apply rendered with the plan: every object the plan showed
// must be rendered exactly so, and every object the plan left unknown must exist.
func checkPlanned(plan types.Map, applied map[string]string) error {
	if plan.IsUnknown() {
		return nil
	}
	known, unknown := plannedManifests(plan)
	comparable := make(map[string]string, len(applied))
	for k, v := range applied {
		comparable[k] = v
	}
	for _, k := range unknown {
		if _, ok := applied[k]; !ok {
			return &helmrelease.PlanMismatchError{Object: k, Change: "missing at apply"}
		}
		delete(comparable, k)
	}
	return helmrelease.ComparePlanned(known, comparable)
}

// generatedValuesWarning says which objects a plan cannot show because the chart generates
// their values afresh, and that later plans keep them.
func generatedValuesWarning(m *releaseModel, r *rendering, diags *diag.Diagnostics) {
	switch {
	case r.rendered.NamesGenerated:
		diags.AddAttributeWarning(path.Root("manifests"), "Object Names Known After Apply", fmt.Sprintf(
			"Release %s: the chart generates the name of an object it applies (randAlphaNum, uuidv4, now or similar in metadata.name), "+
				"so this plan cannot list the objects; manifests are known after apply. Later plans take the name from what the apply "+
				"applied, so they list the objects and show only what changes.", m.releaseID()))
	case len(r.generated) > 0:
		diags.AddAttributeWarning(path.Root("manifests"), "Generated Values Known After Apply", fmt.Sprintf(
			"Release %s: the chart generates values (randAlphaNum, uuidv4, genCA, now or similar) in %s, so this plan cannot show "+
				"what they will hold; they are known after apply. Later plans keep the values the apply generates, as long as the "+
				"objects stay, and show only what changes. To choose a value yourself, pass it in through values or set_sensitive.",
			m.releaseID(), strings.Join(r.generated, ", ")))
	}
}
