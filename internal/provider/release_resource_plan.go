package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	rcommon "helm.sh/helm/v4/pkg/release/common"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
)

// renderEnv is what a rendering needs from the cluster, or from the provider configuration
// in its place.
type renderEnv struct {
	kubeVersion  string
	apiVersions  []string
	isNamespaced func(apiVersion, kind string) bool
	// client is nil when rendering offline.
	client *helmrelease.Client
	// request is what the plan, apply or refresh reads of the cluster, read once: the
	// release's history and the lookup answers (no history and no lookup offline).
	request *release.Request
	// origin says where the capabilities come from, for logs.
	origin string
}

// renderEnvironment decides the capabilities a release renders with: the provider's
// kube_version (and api_versions) when set, else the cluster's version and API versions,
// else Helm's defaults with a warning. needCluster is set by operations that cannot work
// offline (apply, refresh, destroy); they get an error instead of the fallback.
func (r *releaseResource) renderEnvironment(ctx context.Context, m *releaseModel, needCluster bool, diags *diag.Diagnostics) *renderEnv {
	env := r.clusterEnvironment(ctx, m, needCluster, diags)
	if env == nil {
		return nil
	}
	var cluster release.Cluster
	if env.client != nil {
		cluster = env.client
	}
	env.request = release.Prepare(ctx, cluster, m.Namespace.ValueString(), m.Name.ValueString())
	return env
}

// clusterEnvironment returns the capabilities and the client a release renders with (see
// renderEnvironment).
func (r *releaseResource) clusterEnvironment(ctx context.Context, m *releaseModel, needCluster bool, diags *diag.Diagnostics) *renderEnv {
	env := &renderEnv{isNamespaced: manifest.BuiltinIsNamespaced}
	pinned := r.data != nil && r.data.kubeVersion != ""
	var extra []string
	if r.data != nil {
		extra = r.data.apiVersions
	}
	if pinned {
		env.kubeVersion, env.origin = r.data.kubeVersion, "the provider's kube_version"
		if len(extra) > 0 {
			env.apiVersions = append(chart.DefaultAPIVersions(), extra...)
		}
	}
	if pinned && !needCluster {
		return env
	}
	if r.data == nil || r.data.conn == nil {
		diags.AddError("Provider Not Configured", errNotConfigured.Error())
		return nil
	}
	clients, err := r.data.conn.Clients(ctx)
	if err != nil {
		if needCluster {
			diags.Append(connectionDiagnostic(err, "release "+m.releaseID()))
			return nil
		}
		diags.AddWarning("Rendering Without the Cluster's Capabilities", fmt.Sprintf(
			"The cluster could not be reached, so release %s is rendered with Helm's default .Capabilities (Kubernetes version and API "+
				"versions). Charts that test .Capabilities may render differently at apply, which the apply then refuses. To plan without "+
				"a cluster, set kube_version (and api_versions) in the provider configuration.\n\n%s", m.releaseID(), redactorFor(m).String(err.Error())))
		env.origin = "Helm's defaults"
		if len(extra) > 0 {
			env.apiVersions = append(chart.DefaultAPIVersions(), extra...)
		}
		return env
	}
	env.client = newHelmClient(ctx, clients, m)
	if pinned {
		return env
	}
	kubeVersion, apiVersions, err := env.client.ServerCapabilities()
	if err != nil {
		diags.AddError("Unable to Discover Cluster Capabilities", fmt.Sprintf(
			"The API versions of %s could not be listed, so release %s cannot be rendered the way Helm would render it there. Check the "+
				"cluster's API services (kubectl get apiservices), or set kube_version and api_versions in the provider configuration.\n\n%v",
			clients.Source, m.releaseID(), err))
		return nil
	}
	env.kubeVersion, env.apiVersions, env.origin = kubeVersion, append(apiVersions, extra...), "the cluster"
	env.isNamespaced = env.client.IsNamespaced
	return env
}

// nextApply decides the next apply of the release from its history in the cluster, or from
// the state's revision and status when the plan is made without the cluster (or the history
// cannot be read: the apply reads it again and refuses a rendering the plan did not show).
func nextApply(ctx context.Context, m *releaseModel, env *renderEnv, state *releaseModel) helmrelease.Next {
	next, err := env.request.History.Next()
	if err == nil {
		return next
	}
	if env.client != nil {
		tflog.Debug(ctx, "release history unreadable at plan time; deciding from the state", map[string]any{"release": m.releaseID(), "error": redactorFor(m).String(err.Error())})
	}
	if state == nil {
		return helmrelease.Decide(nil)
	}
	return helmrelease.DecideFromLast(helmrelease.Revision{Version: int(state.Revision.ValueInt64()), Status: rcommon.Status(state.Status.ValueString())})
}

// rendering is a chart rendered for a release, with its manifests.
type rendering struct {
	loaded *chart.Loaded
	values map[string]any
	// inputs are the values as configured, for the redaction.
	inputs    chart.Values
	options   chart.RenderOptions
	rendered  *chart.Rendered
	manifests map[string]string
	// redacted hides what the rendering derives from sensitive values, with redaction.
	redacted  *chart.RedactedRendering
	redaction chart.Redaction
	// key keys the markers (see redactionPrivateKey); nil before the release has one.
	key []byte
	// seed is what the templates draw from (see generatedRecord); nil before the release has one.
	seed []byte
	// generated are the keys of the objects holding values the chart generated afresh.
	generated []string
	// conservative says that manifests are an imported release's, redacted conservatively,
	// kept as nothing changed (see keepUnchanged).
	conservative bool
}

// render loads the chart, merges the values and renders the release's manifests. Errors
// become diagnostics on the attribute they concern.
func (r *releaseResource) render(ctx context.Context, m *releaseModel, env *renderEnv, target helmrelease.Target, key []byte, gen generatedRecord, diags *diag.Diagnostics) *rendering {
	loaded := r.load(ctx, m, diags)
	if loaded == nil {
		return nil
	}
	loaded.key, loaded.seed = key, gen.Seed
	return r.renderLoaded(ctx, m, env, target, loaded, gen.prior(ctx, env, m), diags)
}

// load loads the chart and merges the values; the result's options and rendering are unset.
func (r *releaseResource) load(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) *rendering {
	redactor := redactorFor(m)
	out := &rendering{}
	var err error
	out.loaded, err = chart.Load(ctx, m.chartSource())
	if err != nil {
		if d, ok := repositoryConnectionDiagnostic(m, err, redactor.String); ok {
			diags.Append(d)
			return nil
		}
		diags.AddAttributeError(path.Root("chart"), "Unable to Load Chart", fmt.Sprintf(
			"The chart of release %s could not be loaded. Check chart, repository and version: a local path must exist, a remote "+
				"chart must exist in the repository at a version that matches.\n\n%s", m.releaseID(), redactor.String(err.Error())))
		return nil
	}
	values := chart.Values{}
	diags.Append(m.Values.ElementsAs(ctx, &values.Documents, false)...)
	diags.Append(m.Set.ElementsAs(ctx, &values.Set, false)...)
	diags.Append(m.SetSensitive.ElementsAs(ctx, &values.SetSensitive, false)...)
	diags.Append(m.ValuesSensitive.ElementsAs(ctx, &values.SensitiveDocuments, false)...)
	if diags.HasError() {
		return nil
	}
	out.inputs = values
	if out.values, err = chart.MergeValues(values); err != nil {
		diags.Append(valuesDiagnostic(m.releaseID(), err, redactor.String))
		return nil
	}
	return out
}

// renderLoaded renders a loaded chart for target, drawing from the release's seed and keeping
// drawn values from prior, what the release applied last (see chart.RenderStable). With the
// cluster at hand, lookup is answered from the release's namespace.
func (r *releaseResource) renderLoaded(ctx context.Context, m *releaseModel, env *renderEnv, target helmrelease.Target, loaded *rendering, prior chart.Prior, diags *diag.Diagnostics) *rendering {
	redactor := redactorFor(m)
	out := &rendering{loaded: loaded.loaded, values: loaded.values, inputs: loaded.inputs, key: loaded.key, seed: loaded.seed}
	out.options = chart.RenderOptions{
		ReleaseName: m.Name.ValueString(), Namespace: m.Namespace.ValueString(),
		KubeVersion: env.kubeVersion, APIVersions: env.apiVersions,
		IsUpgrade: target.IsUpgrade, Revision: target.Revision, Seed: loaded.seed,
	}
	if env.request.Lookup != nil {
		out.options.Lookup = env.request.Lookup
	}
	var err error
	if out.rendered, err = chart.RenderStable(ctx, out.loaded, out.values, out.options, prior); err != nil {
		diags.AddAttributeError(path.Root("chart"), "Unable to Render Chart", fmt.Sprintf(
			"Helm could not render chart %s %s for release %s. The message names the template file and line; fix the template or the values it uses.\n\n%s",
			out.loaded.Chart.Name(), out.loaded.Version, m.releaseID(), chart.RedactRenderError(ctx, out.loaded, out.inputs, out.options, err, redactor)))
		return nil
	}
	redaction := chart.Redaction{Namespace: m.Namespace.ValueString(), IsNamespaced: env.isNamespaced, Key: out.key}
	if p := m.RepositoryPassword.ValueString(); p != "" {
		redaction.Sensitive = []string{p}
	}
	redacted, err := chart.RedactStable(ctx, out.loaded, out.inputs, out.options, out.rendered, redaction)
	switch {
	case errors.Is(err, chart.ErrRedaction):
		diags.AddAttributeError(path.Root("chart"), "Unable to Redact Chart", fmt.Sprintf(
			"Chart %s %s cannot be shown for release %s without risking a sensitive value: the provider renders it again with each "+
				"sensitive value replaced by another of the same length and characters to find what derives from it, and that failed. "+
				"Make the objects and their structure depend only on non-sensitive values (a template may put a sensitive value into a "+
				"field, not decide with it which objects or list items exist).\n\n%s",
			out.loaded.Chart.Name(), out.loaded.Version, m.releaseID(), redactor.String(err.Error())))
		return nil
	case err != nil:
		diags.AddAttributeError(path.Root("chart"), "Invalid Rendered Manifests", fmt.Sprintf(
			"Chart %s %s rendered objects for release %s that cannot be applied. Fix the template that produces them.\n\n%s",
			out.loaded.Chart.Name(), out.loaded.Version, m.releaseID(), redactor.String(err.Error())))
		return nil
	}
	out.manifests, out.redacted, out.redaction = redacted.Manifests, redacted, redaction
	// From here on, diagnostics and the release's log hide what this rendering derived.
	m.redactorCell().Store(redacted.Redactor)
	out.generated = generatedKeys(out.rendered, m.Namespace.ValueString(), env.isNamespaced)
	return out
}

func (m *releaseModel) chartSource() chart.Source {
	src := chart.Source{
		Chart:      m.Chart.ValueString(),
		Repository: m.Repository.ValueString(),
		Version:    m.Version.ValueString(),
		Username:   m.RepositoryUsername.ValueString(),
		Password:   m.RepositoryPassword.ValueString(),
		PlainHTTP:  m.PlainHTTP.ValueBool(),
		TLS:        m.chartTLS(),
		// Rendering with an unknown dependency_update waits for the apply, see unknownRenderInputs.
		DependencyUpdate: m.DependencyUpdate.ValueBool(),
	}
	if dir, err := os.UserCacheDir(); err == nil {
		src.CacheDir = filepath.Join(dir, "terraform-provider-gitlabk8s", "charts")
	}
	return src
}

// sensitiveValues are the values no plan, state attribute or log may show: the set_sensitive
// values, the leaves of the values_sensitive documents and the repository password.
func (m *releaseModel) sensitiveValues() []string {
	var values []string
	for _, v := range m.SetSensitive.Elements() {
		if s, ok := v.(types.String); ok && !s.IsNull() && !s.IsUnknown() && s.ValueString() != "" {
			values = append(values, s.ValueString())
		}
	}
	var docs []string
	for _, v := range m.ValuesSensitive.Elements() {
		if s, ok := v.(yamlValue); ok && !s.IsNull() && !s.IsUnknown() {
			docs = append(docs, s.ValueString())
		}
	}
	values = append(values, chart.Values{SensitiveDocuments: docs}.SensitiveInputs()...)
	if p := m.RepositoryPassword.ValueString(); p != "" {
		values = append(values, p)
	}
	return values
}

// redactorFor returns the redactor of m's diagnostics and logs: once m is rendered, the
// rendering's (chart.RedactStable), which knows every form the chart derived from a sensitive
// value, so that an error quoting rendered content (an API server refusing a field, a failed
// dry run) hides them as the plan does; before, the sensitive values and their encodings.
func redactorFor(m *releaseModel) *manifest.Redactor {
	return m.redactorCell().Load()
}

// redactorCell returns the cell holding m's redactor, made with m's sensitive values on
// first use. The first use is in the goroutine handling the request, before any log is made.
func (m *releaseModel) redactorCell() *atomic.Pointer[manifest.Redactor] {
	if m.redactor == nil {
		m.redactor = &atomic.Pointer[manifest.Redactor]{}
		m.redactor.Store(manifest.NewRedactor(m.sensitiveValues()))
	}
	return m.redactor
}

// unknownRenderInputs names the inputs of the rendering that are not known yet.
func (m *releaseModel) unknownRenderInputs() []string {
	var unknown []string
	for name, v := range map[string]attr.Value{
		"name": m.Name, "namespace": m.Namespace, "chart": m.Chart, "repository": m.Repository, "version": m.Version,
		"repository_username": m.RepositoryUsername, "repository_password": m.RepositoryPassword, "plain_http": m.PlainHTTP,
		"dependency_update": m.DependencyUpdate, "repository_ca_file": m.RepositoryCAFile, "repository_cert_file": m.RepositoryCertFile,
		"repository_key_file": m.RepositoryKeyFile, "insecure_skip_tls_verify": m.InsecureSkipTLSVerify,
	} {
		if v.IsUnknown() {
			unknown = append(unknown, name)
		}
	}
	collections := map[string][]attr.Value{"values": m.Values.Elements()}
	for _, e := range m.Set.Elements() {
		collections["set"] = append(collections["set"], e)
	}
	for _, e := range m.SetSensitive.Elements() {
		collections["set_sensitive"] = append(collections["set_sensitive"], e)
	}
	collections["values_sensitive"] = m.ValuesSensitive.Elements()
	for name, v := range map[string]attr.Value{"values": m.Values, "set": m.Set, "set_sensitive": m.SetSensitive, "values_sensitive": m.ValuesSensitive} {
		if v.IsUnknown() || slices.ContainsFunc(collections[name], attr.Value.IsUnknown) {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	return unknown
}

// ModifyPlan renders the chart so the plan shows every object the apply will apply.
func (r *releaseResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan releaseModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	var state *releaseModel
	if !req.State.Raw.IsNull() {
		state = &releaseModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if !plan.Name.IsUnknown() && !plan.Namespace.IsUnknown() {
		plan.ID = types.StringValue(plan.releaseID())
	}

	unknown := plan.unknownRenderInputs()
	if len(unknown) > 0 || r.data == nil {
		plan.Manifests = types.MapUnknown(types.StringType)
		plan.ChartVersion, plan.AppVersion, plan.ChartDigest = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
		plan.Revision, plan.Status = types.Int64Unknown(), types.StringValue(string(rcommon.StatusDeployed))
		if len(unknown) > 0 {
			resp.Diagnostics.AddWarning("Manifests Known After Apply", fmt.Sprintf(
				"The manifests of release %s cannot be shown in this plan because %s %s not known until apply. The apply renders them once "+
					"every input is known. To see them in the plan, make these inputs known at plan time (for example, avoid values computed "+
					"by resources that do not exist yet).", plan.releaseID(), strings.Join(unknown, ", "), pluralVerb(len(unknown))))
		}
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}

	env := r.renderEnvironment(ctx, &plan, false, &resp.Diagnostics)
	if env == nil {
		return
	}
	loaded := r.load(ctx, &plan, &resp.Diagnostics)
	if loaded == nil {
		return
	}
	rec, gen := readRedaction(ctx, req.Private), readGenerated(ctx, req.Private)
	loaded.key, loaded.seed = rec.Key, gen.Seed
	prior := gen.prior(ctx, env, &plan)
	if state != nil && state.Status.ValueString() == string(rcommon.StatusDeployed) && state.Revision.ValueInt64() > 0 {
		// Compare with what the current revision renders: objects that use .Release.Revision or
		// .Release.IsUpgrade (hooks, often) differ in every revision, and must not make the plan
		// of an unchanged release non-empty.
		current := helmrelease.Target{Revision: int(state.Revision.ValueInt64()), IsUpgrade: state.Revision.ValueInt64() > 1}
		same := r.renderLoaded(ctx, &plan, env, current, loaded, prior, &resp.Diagnostics)
		if same == nil {
			return
		}
		same.keepUnchanged(state, rec)
		unchanged := sameManifests(same.manifests, state.Manifests) || r.onlyIgnoredDiffer(ctx, env, &plan, state, rec, same.manifests)
		if unchanged && same.loaded.Version == state.ChartVersion.ValueString() {
			plan.Manifests, plan.Revision, plan.Status = state.Manifests, state.Revision, state.Status
			plan.ChartVersion = types.StringValue(same.loaded.Version)
			plan.AppVersion = types.StringValue(same.loaded.AppVersion)
			plan.ChartDigest = types.StringValue(same.loaded.Digest)
			resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
			return
		}
	}
	// A release may also exist without a state, from an earlier run whose create failed; the
	// apply continues it.
	target := nextApply(ctx, &plan, env, state).Target
	first := r.renderLoaded(ctx, &plan, env, target, loaded, prior, &resp.Diagnostics)
	if first == nil {
		return
	}
	first.keepUnchanged(state, rec)
	if r.checkRendering(ctx, &plan, state, env, first, &resp.Diagnostics); resp.Diagnostics.HasError() {
		return
	}
	tflog.Debug(ctx, "rendered release", map[string]any{"release": plan.releaseID(), "objects": len(first.manifests), "capabilities": env.origin, "kube_version": env.kubeVersion})

	manifests, d := plannedElements(first)
	resp.Diagnostics.Append(d...)
	plan.Manifests = manifests
	generatedValuesWarning(&plan, first, &resp.Diagnostics)
	plan.ChartVersion = types.StringValue(first.loaded.Version)
	plan.AppVersion = types.StringValue(first.loaded.AppVersion)
	plan.ChartDigest = types.StringValue(first.loaded.Digest)
	if state == nil || needsUpgrade(&plan, state) {
		plan.Revision, plan.Status = types.Int64Unknown(), types.StringValue(string(rcommon.StatusDeployed))
	} else {
		plan.Revision, plan.Status = state.Revision, state.Status
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// onlyIgnoredDiffer reports whether rendered differs from the state's manifests only in what
// the plan's ignore_differences ignore: the live objects are read again with the plan's rules
// (the state's were refreshed with the state's, and not at all with -refresh=false), so a rule
// takes effect in the plan that adds it, and a difference it ignores never upgrades the release.
func (r *releaseResource) onlyIgnoredDiffer(ctx context.Context, env *renderEnv, plan, state *releaseModel, rec manifest.Redaction, rendered map[string]string) bool {
	if env.client == nil || (plan.IgnoreDifferences.Equal(state.IgnoreDifferences) && len(plan.ignoreRules(ctx)) == 0) {
		return false
	}
	rel, err := env.request.History.Last(state.Namespace.ValueString(), state.Name.ValueString())
	if err != nil {
		return false
	}
	withRules := *state
	withRules.IgnoreDifferences = plan.IgnoreDifferences
	var diags diag.Diagnostics
	refreshed := r.liveManifests(ctx, env, &withRules, rel, rec, nil, &diags)
	return !diags.HasError() && sameManifests(rendered, refreshed)
}

// sameManifests reports whether rendered equals the known manifests of a state.
func sameManifests(rendered map[string]string, state types.Map) bool {
	known, unknown := plannedManifests(state)
	return !state.IsNull() && !state.IsUnknown() && len(unknown) == 0 && len(known) == len(state.Elements()) && maps.Equal(known, rendered)
}

// needsUpgrade reports whether applying plan over state takes a Helm upgrade: the objects or
// the chart version change, or the release is not deployed. Settings alone (timeout, atomic,
// a reformatted values document) are only recorded.
func needsUpgrade(plan, state *releaseModel) bool {
	return !plan.Manifests.Equal(state.Manifests) ||
		!plan.ChartVersion.Equal(state.ChartVersion) ||
		state.Status.ValueString() != string(rcommon.StatusDeployed)
}

func pluralVerb(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
