package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/environment"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
)

// ValidateConfig reports bad input at `terraform validate`, on the attribute at
// fault, for every value already known.
func (r *environmentResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var config environmentModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec, parts, diags := config.spec(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	addProblems(&resp.Diagnostics, validateKnownParts(spec, parts))
}

// ModifyPlan computes slug, namespace and manifests from the planned values and
// the CI job's metadata, so the first plan of a new environment already shows
// every object, and decides when a changed namespace replaces the environment.
func (r *environmentResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan environmentModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var state *environmentModel
	if !req.State.Raw.IsNull() {
		state = &environmentModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}

	// The namespace attribute is computed when unset, so the plan holds
	// "unknown" for it; the configuration says whether it was set.
	var configNamespace types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("namespace"), &configNamespace)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.Namespace = configNamespace

	spec, parts, diags := plan.spec(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ci := r.data.ci

	plan.Slug, plan.Namespace, plan.Manifests = types.StringUnknown(), types.StringUnknown(), types.MapUnknown(types.StringType)
	if parts.name {
		plan.Slug = types.StringValue(gitlab.SlugFor(spec.Name, ci))
	}
	if parts.namespace && (spec.Namespace != "" || parts.name) {
		_, namespace := environment.Resolve(spec, ci)
		plan.Namespace = types.StringValue(namespace)
	}
	if parts.all() {
		env, problems := environment.Build(spec, ci)
		if len(problems) > 0 {
			// Values unknown at validate time (from other resources) are checked here.
			addProblems(&resp.Diagnostics, problems)
			return
		}
		manifests, err := env.Manifests()
		if err != nil {
			resp.Diagnostics.AddError("Unable to Render Environment",
				"The objects of environment "+spec.Name+" could not be rendered. This is a bug in the provider; please report it.\n\n"+err.Error())
			return
		}
		plan.Manifests = stringMapValue(manifests)
	} else {
		addProblems(&resp.Diagnostics, validateKnownParts(spec, parts))
	}
	plan.ID = plan.Namespace

	if state != nil {
		switch {
		case !plan.Namespace.Equal(state.Namespace):
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("namespace"))
			plan.UID = types.StringUnknown()
		case !stateHasNamespace(ctx, *state, plan.Namespace.ValueString()):
			// The namespace is terminating: the apply creates a new one.
			plan.UID = types.StringUnknown()
		default:
			plan.UID = state.UID
		}
	}
	if !plan.Namespace.IsUnknown() {
		var stateLabels *types.Map
		if state != nil && len(resp.RequiresReplace) == 0 {
			stateLabels = &state.Labels
		}
		r.data.planned.put(plan.Namespace.ValueString(), stateLabels, plan.Labels)
	}
	tflog.Debug(ctx, "planned environment", map[string]any{"name": spec.Name, "namespace": plan.Namespace.String(), "replace": len(resp.RequiresReplace) > 0})
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// stateHasNamespace reports whether the refreshed state holds the namespace
// object; a terminating namespace is held without objects.
func stateHasNamespace(ctx context.Context, state environmentModel, namespace string) bool {
	if state.Manifests.IsNull() || state.Manifests.IsUnknown() {
		return true // imported, not refreshed yet
	}
	_, ok := state.Manifests.Elements()["Namespace/"+namespace]
	return ok
}
