package provider

import (
	"context"
	"crypto/rand"
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
// release's generatedRecord.
const generatedPrivateKey = "generated"

// privateGetter and privateSetter are the framework's private state, as plan and apply use it.
type (
	privateGetter interface {
		GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
	}
	privateSetter interface {
		SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
	}
)

// generatedRecord is what the release's renderings draw from and what its last apply drew.
type generatedRecord struct {
	// Seed is the release's own seed, which its templates draw from (package draw): drawn by
	// the first apply, kept from then on. A plan before it exists cannot show drawn values.
	Seed []byte `json:"seed,omitempty"`
	// Traces are the traces of the values the last apply drew, by place (chart.Rendered.Traces).
	Traces map[string]string `json:"traces,omitempty"`
	// Documents are the outputs of the last apply's templates that draw, for a plan that cannot
	// read the release from the cluster.
	Documents []chart.Document `json:"documents,omitempty"`
}

// readGenerated returns the release's generatedRecord; an entry that cannot be read only costs
// the values it held.
func readGenerated(ctx context.Context, private privateGetter) generatedRecord {
	var rec generatedRecord
	if private == nil {
		return rec
	}
	data, _ := private.GetKey(ctx, generatedPrivateKey)
	if len(data) > 0 && json.Unmarshal(data, &rec) != nil {
		return generatedRecord{}
	}
	return rec
}

// withSeed returns rec with a seed, drawing one when it has none.
func (rec generatedRecord) withSeed(diags *diag.Diagnostics) (generatedRecord, bool) {
	if rec.Seed != nil {
		return rec, true
	}
	rec.Seed = make([]byte, 32)
	if _, err := rand.Read(rec.Seed); err != nil {
		diags.AddError("Unable to Apply Release", fmt.Sprintf("No seed for the values the chart draws could be drawn.\n\n%v", err))
		return rec, false
	}
	return rec, true
}

// prior returns what the release applied last, which a rendering keeps drawn values from:
// the documents Helm recorded when the cluster is reachable, else those the last apply kept in
// rec, with rec's traces.
func (rec generatedRecord) prior(ctx context.Context, env *renderEnv, m *releaseModel) chart.Prior {
	prior := chart.Prior{Documents: rec.Documents, Traces: rec.Traces}
	if env.client == nil {
		return prior
	}
	last, err := env.request.History.Last(m.Namespace.ValueString(), m.Name.ValueString())
	switch {
	case err == nil:
		prior.Documents = helmrelease.Applied(last)
	case errors.Is(err, helmrelease.ErrNotFound):
		prior.Documents = nil
	default:
		tflog.Warn(ctx, "release history unreadable; drawn values come from the last apply", map[string]any{"release": m.releaseID(), "error": redactorFor(m).String(err.Error())})
	}
	return prior
}

// writeGenerated records in private state the seed and what r drew: the traces of its drawn
// values and the templates whose output holds them, for the next plan.
func writeGenerated(ctx context.Context, private privateSetter, seed []byte, r *chart.Rendered) diag.Diagnostics {
	if private == nil {
		return nil
	}
	rec := generatedRecord{Seed: seed, Traces: r.Traces}
	for _, source := range r.Varying {
		rec.Documents = append(rec.Documents, chart.Document{Source: source, Text: r.Files[source]})
	}
	data, err := json.Marshal(rec)
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
			"Release %s: the chart draws values in %s that this plan cannot show: the release's first values, or a key, certificate, "+
				"bcrypt hash or time drawn anew because what it is drawn from changed (the apply cannot draw those alike). They are "+
				"known after apply. Later plans keep the values the apply draws as long as what they are drawn from stays the same, "+
				"and show only what changes. To choose a value yourself, pass it in through values or set_sensitive.",
			m.releaseID(), strings.Join(r.generated, ", ")))
	}
}
