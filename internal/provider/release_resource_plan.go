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
	// checker is what the plan's checks ask the cluster with (plan_checks = "all"): client, or
	// one made for the checks alone when the plan renders with the provider's kube_version; nil
	// when the cluster cannot be reached, and unreachable says why.
	checker     release.Checker
	unreachable error
	// request is what the plan, apply or refresh reads of the cluster, read once: the
	// release's history and the lookup answers (no history and no lookup offline).
	request *release.Request
	// origin says where the capabilities come from, for logs.
	origin string
}

// renderEnvironment decides the capabilities a release renders with: the provider's
// kube_version (and api_versions) when set, else the cluster's version and API versions,
// else Helm's defaults with a warning. Operations other than a plan cannot work offline
// (apply, refresh); they get an error instead of the fallback. A plan takes the history the
// refresh before it read (refreshedHistories); an apply reads it again; a refresh reads the
// objects its state recorded while it reads the history (release.PrepareRefresh).
func (r *releaseResource) renderEnvironment(ctx context.Context, m *releaseModel, recorded *release.Recorded, op releaseOp, private privateGetter, diags *diag.Diagnostics) *renderEnv {
	env := r.clusterEnvironment(ctx, m, op != opPlan, diags)
	if env == nil {
		return nil
	}
	id := m.releaseID()
	refreshed, wasRefreshed := r.data.refreshed.take(id)
	if recorded != nil && !(op == opPlan && wasRefreshed) {
		// An object written as the state's text is given that text again (release_texts.go).
		// A plan after this process's refresh skips it: the refresh wrote or took every text of
		// the state it handed the plan.
		rememberTexts(ctx, private, recorded.Manifests)
	}
	definitions := m.definitions()
	env.apiVersions = withDefinedAPIVersions(env.apiVersions, chart.DefaultAPIVersions, definitions)
	in, ok := m.releaseInputs(ctx, env, private, diags)
	in.PodSecurity = r.data.planned.get(in.Namespace)
	in.Definitions = definitions
	if !ok {
		return nil
	}
	var cluster release.Cluster
	if env.client != nil {
		cluster = env.client
	}
	switch {
	case op == opPlan && wasRefreshed && cluster != nil:
		env.request = release.PrepareWithHistory(cluster, in, refreshed)
	case op == opRefresh:
		env.request = release.PrepareRefresh(ctx, cluster, in, recorded)
	default:
		env.request = release.Prepare(ctx, cluster, in, recorded)
	}
	if op == opRefresh && cluster != nil {
		r.data.refreshed.put(id, env.request.History)
	}
	if err := env.request.History.Err; err != nil {
		tflog.Warn(ctx, "release history unreadable; the next apply is decided from the state and drawn values come from the last apply",
			map[string]any{"release": m.releaseID(), "error": err.Error()})
	}
	return env
}

// releaseInputs are what the release's core takes of m, of the capabilities env found and of
// what the release keeps in private (nil when creating).
func (m *releaseModel) releaseInputs(ctx context.Context, env *renderEnv, private privateGetter, diags *diag.Diagnostics) (release.Inputs, bool) {
	in := release.Inputs{
		Namespace: m.Namespace.ValueString(), Name: m.Name.ValueString(), Chart: m.chartSource(),
		Capabilities:    release.Capabilities{KubeVersion: env.kubeVersion, APIVersions: env.apiVersions, IsNamespaced: env.isNamespaced},
		Redactor:        redactorFor(m),
		OnRedactor:      m.redactorCell().Store,
		RedactionRecord: readRedactionRecord(ctx, private),
		Generated:       readGenerated(ctx, private),
		Imported:        wasImported(ctx, private),
		Ignore:          m.ignoreRules(ctx),
		Patches:         m.patches(ctx),
		TakeOwnership:   m.TakeOwnership.ValueBool(),
		RunTests:        m.RunTests.ValueBool(),
		// The plan checks, and the apply applies, the chart's crds/ definitions (create_replace).
		ReplaceDefinitions: m.replacesCRDs(),
	}
	diags.Append(m.Values.ElementsAs(ctx, &in.Values.Documents, false)...)
	diags.Append(m.Set.ElementsAs(ctx, &in.Values.Set, false)...)
	diags.Append(m.SetSensitive.ElementsAs(ctx, &in.Values.SetSensitive, false)...)
	diags.Append(m.ValuesSensitive.ElementsAs(ctx, &in.Values.SensitiveDocuments, false)...)
	return in, !diags.HasError()
}

// clusterEnvironment decides, in one place, what a release's plan, apply or refresh asks of
// the cluster: the capabilities come from the provider's kube_version when set, else from the
// cluster; the release's client reads and changes the cluster for every operation but a plan
// with kube_version, which renders offline; the plan's checks ask the cluster when plan_checks
// is "all" (see renderEnvironment).
func (r *releaseResource) clusterEnvironment(ctx context.Context, m *releaseModel, needCluster bool, diags *diag.Diagnostics) *renderEnv {
	d := m.diagnostics()
	env := &renderEnv{isNamespaced: manifest.BuiltinIsNamespaced}
	pinned, extra := r.data.kubeVersion != "", r.data.apiVersions
	checks := !needCluster && release.CheckLevel(m.PlanChecks.ValueString()) == release.CheckAll
	if pinned {
		env.kubeVersion, env.origin = r.data.kubeVersion, "the provider's kube_version"
		if len(extra) > 0 {
			env.apiVersions = append(chart.DefaultAPIVersions(), extra...)
		}
	}
	if pinned && !needCluster && !checks {
		return env
	}
	clients, err := r.data.connect(ctx)
	switch {
	case err != nil && pinned && !needCluster:
		env.unreachable = err
		return env
	case err != nil && (needCluster || errors.Is(err, errNotConfigured)):
		diags.Append(d.Redacted(connectionDiagnostic(err, "release "+m.releaseID())))
		return nil
	case err != nil:
		diags.Append(d.Warning("Rendering Without the Cluster's Capabilities", fmt.Sprintf(
			"The cluster could not be reached, so release %s is rendered with Helm's default .Capabilities (Kubernetes version and API "+
				"versions). Charts that test .Capabilities may render differently at apply, which the apply then refuses. To plan without "+
				"a cluster, set kube_version (and api_versions) in the provider configuration.\n\n%s", m.releaseID(), err.Error())))
		env.origin, env.unreachable = "Helm's defaults", err
		if len(extra) > 0 {
			env.apiVersions = append(chart.DefaultAPIVersions(), extra...)
		}
		return env
	}
	client := newHelmClient(ctx, clients, m)
	if checks {
		env.checker = client
	}
	if pinned && !needCluster {
		return env // rendered offline, checked against the cluster
	}
	env.client = client
	if pinned {
		return env
	}
	kubeVersion, apiVersions, err := client.ServerCapabilities()
	if err != nil {
		diags.Append(d.Error("Unable to Discover Cluster Capabilities", fmt.Sprintf(
			"The API versions of %s could not be listed, so release %s cannot be rendered the way Helm would render it there. Check the "+
				"cluster's API services (kubectl get apiservices), or set kube_version and api_versions in the provider configuration.\n\n%v",
			clients.Source, m.releaseID(), err)))
		return nil
	}
	env.kubeVersion, env.apiVersions, env.origin = kubeVersion, append(apiVersions, extra...), "the cluster"
	env.isNamespaced = client.IsNamespaced
	return env
}

// recordedOf returns what state recorded of the release's last plan or apply, nil without a
// state.
func recordedOf(state *releaseModel) *release.Recorded {
	if state == nil {
		return nil
	}
	known, complete := completeManifests(state.Manifests)
	return &release.Recorded{
		Manifests: known,
		Complete:  complete,
		Revision:  int(state.Revision.ValueInt64()), Status: rcommon.Status(state.Status.ValueString()),
		ChartVersion: state.ChartVersion.ValueString(),
	}
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

// redactorCell returns the cell holding m's redactor: the one readRelease made when it read m,
// which the release's request updates as it renders (release.Inputs.OnRedactor) and its logs
// and diagnostics read; for a model made otherwise (a test's), a cell of its own, not kept,
// with m's sensitive values.
func (m *releaseModel) redactorCell() *atomic.Pointer[manifest.Redactor] {
	if m.redactor != nil {
		return m.redactor
	}
	return newRedactorCell(m)
}

// newRedactorCell returns a cell holding the redactor of m's sensitive values.
func newRedactorCell(m *releaseModel) *atomic.Pointer[manifest.Redactor] {
	cell := &atomic.Pointer[manifest.Redactor]{}
	cell.Store(manifest.NewRedactor(m.sensitiveValues(), nil, nil))
	return cell
}

// modelSource is a plan or a state the framework hands a request.
type modelSource interface {
	Get(ctx context.Context, target any) diag.Diagnostics
}

// readRelease reads m from a plan or a state and makes its redactor cell, before anything of
// the request logs or builds a diagnostic.
func readRelease(ctx context.Context, from modelSource, m *releaseModel) diag.Diagnostics {
	diags := from.Get(ctx, m)
	m.redactor = newRedactorCell(m)
	return diags
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
	if hasUnknownValue(m.Patches) {
		unknown = append(unknown, "patches")
	}
	if hasUnknownValue(m.CRDsFrom) {
		unknown = append(unknown, "crds_from")
	}
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
	resp.Diagnostics.Append(readRelease(ctx, req.Plan, &plan)...)
	d := plan.diagnostics()
	var state *releaseModel
	if !req.State.Raw.IsNull() {
		state = &releaseModel{}
		resp.Diagnostics.Append(readRelease(ctx, req.State, state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if !plan.Name.IsUnknown() && !plan.Namespace.IsUnknown() {
		plan.ID = types.StringValue(plan.releaseID())
	}

	unknown := plan.unknownRenderInputs()
	if len(unknown) > 0 || !r.data.configured() {
		plan.Manifests = types.MapUnknown(types.StringType)
		plan.ChartVersion, plan.AppVersion, plan.ChartDigest = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
		plan.Revision, plan.Status = types.Int64Unknown(), types.StringValue(string(rcommon.StatusDeployed))
		if len(unknown) > 0 {
			resp.Diagnostics.Append(d.Warning("Manifests Known After Apply", fmt.Sprintf(
				"The manifests of release %s cannot be shown in this plan because %s %s not known until apply. The apply renders them once "+
					"every input is known. To see them in the plan, make these inputs known at plan time (for example, avoid values computed "+
					"by resources that do not exist yet).", plan.releaseID(), strings.Join(unknown, ", "), pluralVerb(len(unknown)))))
		}
		plan.setFromManifests()
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}

	// A creation's plan reads nothing from private: when the refresh finds the release gone
	// (uninstalled or its namespace deleted outside Terraform), Terraform hands the plan the
	// private state of the release that was, but not the plan it makes again during the apply,
	// so a key read here would show markers the apply's plan cannot repeat.
	var private privateGetter
	if state != nil {
		private = req.Private
	}
	recorded := recordedOf(state)
	env := r.renderEnvironment(ctx, &plan, recorded, opPlan, private, &resp.Diagnostics)
	if env == nil {
		return
	}
	// Turning create_replace on: the refresh kept the definitions of crds/ as recorded, under
	// the state's create, and the apply replaces those the cluster has otherwise.
	var replaced []string
	if state != nil && plan.replacesCRDs() && !state.replacesCRDs() && env.client != nil {
		live, changed, err := env.request.WithLiveDefinitions(ctx, recorded)
		if err != nil {
			tflog.Warn(ctx, "the definitions of crds/ not read from the cluster", map[string]any{"release": plan.releaseID(), "error": redactorFor(&plan).String(err.Error())})
		} else {
			recorded, replaced = live, changed
		}
	}
	var onlyIgnoredDiffer func(map[string]string) bool
	if state != nil {
		onlyIgnoredDiffer = func(rendered map[string]string) bool {
			return r.onlyIgnoredDiffer(ctx, env, &plan, state, rendered)
		}
	}
	if state != nil && !req.Plan.Raw.Equal(req.State.Raw) {
		// The configuration changed: what the checks read first is read while the plan renders.
		env.request.CheckAhead(ctx, recorded, release.CheckLevel(plan.PlanChecks.ValueString()), env.checker)
	}
	planned, err := env.request.Plan(ctx, recorded, onlyIgnoredDiffer)
	if err != nil {
		resp.Diagnostics.Append(planRefusedDiagnostic(&plan, err))
		return
	}
	first := planned.Rendering
	plan.ChartVersion = types.StringValue(first.Loaded.Version)
	plan.AppVersion = types.StringValue(first.Loaded.AppVersion)
	plan.ChartDigest = types.StringValue(first.Loaded.Digest)
	if planned.Unchanged {
		addRunningPodsWarning(&plan, env.request.RunningPodSecurity(ctx, first, recorded, env.checker), &resp.Diagnostics)
		plan.Manifests, plan.Revision, plan.Status = state.Manifests, state.Revision, state.Status
		plan.setFromManifests()
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}
	if r.checkRendering(ctx, &plan, recorded, env, planned, &resp.Diagnostics); resp.Diagnostics.HasError() {
		return
	}
	tflog.Debug(ctx, "rendered release", map[string]any{"release": plan.releaseID(), "objects": len(first.Manifests), "capabilities": env.origin, "kube_version": env.kubeVersion})

	manifests, converted := plannedElements(first)
	resp.Diagnostics.Append(converted...)
	plan.Manifests = manifests
	generatedValuesWarning(&plan, first, &resp.Diagnostics)
	definitionsNotAppliedWarning(&plan, planned.DefinitionsNotApplied, &resp.Diagnostics)
	if planned.Next.Adopt {
		resp.Diagnostics.Append(takeOverWarning(&plan, planned))
	}
	definitionsReplacedWarning(&plan, replaced, &resp.Diagnostics)
	if needsUpgrade(&plan, state) || len(replaced) > 0 {
		plan.Revision, plan.Status = types.Int64Unknown(), types.StringValue(string(rcommon.StatusDeployed))
	} else {
		plan.Revision, plan.Status = state.Revision, state.Status
	}
	plan.setFromManifests()
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// onlyIgnoredDiffer reports whether rendered differs from the state's manifests only in what
// the plan's ignore_differences ignore: the live objects are read again with the plan's rules
// (the state's were refreshed with the state's, and not at all with -refresh=false), so a rule
// takes effect in the plan that adds it, and a difference it ignores never upgrades the release.
func (r *releaseResource) onlyIgnoredDiffer(ctx context.Context, env *renderEnv, plan, state *releaseModel, rendered map[string]string) bool {
	if env.client == nil || (plan.IgnoreDifferences.Equal(state.IgnoreDifferences) && len(plan.ignoreRules(ctx)) == 0) {
		return false
	}
	rel, err := env.request.History.Last(state.Namespace.ValueString(), state.Name.ValueString())
	if err != nil {
		return false
	}
	refreshed, err := env.request.LiveManifests(ctx, rel, recordedOf(state))
	return err == nil && maps.Equal(rendered, refreshed)
}

// needsUpgrade reports whether applying plan over state takes a Helm install or upgrade
// (release.Recorded.Upgraded).
func needsUpgrade(plan, state *releaseModel) bool {
	return recordedOf(state).Upgraded(shownOf(plan), plan.ChartVersion.ValueString())
}

// shownOf is what plan shows of the manifests.
func shownOf(plan *releaseModel) release.Shown {
	known, unknown := plannedManifests(plan.Manifests)
	return release.Shown{Unknown: plan.Manifests.IsUnknown(), Manifests: known, UnknownKeys: unknown}
}

func pluralVerb(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
