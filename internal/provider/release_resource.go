package provider

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

var (
	_ resource.ResourceWithConfigure   = (*releaseResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*releaseResource)(nil)
	_ resource.ResourceWithImportState = (*releaseResource)(nil)
)

var _ = registerResource(newReleaseResource)

// Defaults of the release resource, used by the schema and by import.
const (
	defaultReleaseTimeout    = "5m"
	defaultReleaseMaxHistory = 10
	defaultReleaseAtomic     = true
	defaultReleaseWait       = true
	defaultRecoverPending    = true
	defaultReleaseCascade    = string(helmrelease.CascadeBackground)
)

// The levels of plan_checks.
const (
	planChecksAll     = "all"
	planChecksOffline = "offline"
	planChecksNone    = "none"
)

var planCheckLevels = []string{planChecksAll, planChecksOffline, planChecksNone}

// releaseCascades are the deletion cascades a destroy may use, as Helm's --cascade names them.
var releaseCascades = []string{string(helmrelease.CascadeBackground), string(helmrelease.CascadeForeground), string(helmrelease.CascadeOrphan)}

// releaseResource is gitlabk8s_release: a Helm release whose plan shows every rendered
// object. Rendering lives in package chart, Helm actions in package helmrelease; the files
// release_resource*.go translate between Terraform and those.
type releaseResource struct {
	data *providerData
}

func newReleaseResource() resource.Resource { return &releaseResource{} }

// releaseModel is the resource's schema as Go values.
type releaseModel struct {
	ID                 types.String `tfsdk:"id"`
	Name               types.String `tfsdk:"name"`
	Namespace          types.String `tfsdk:"namespace"`
	Chart              types.String `tfsdk:"chart"`
	Repository         types.String `tfsdk:"repository"`
	RepositoryUsername types.String `tfsdk:"repository_username"`
	RepositoryPassword types.String `tfsdk:"repository_password"`
	PlainHTTP          types.Bool   `tfsdk:"plain_http"`
	RepositoryCAFile   types.String `tfsdk:"repository_ca_file"`
	RepositoryCertFile types.String `tfsdk:"repository_cert_file"`
	RepositoryKeyFile  types.String `tfsdk:"repository_key_file"`
	// InsecureSkipTLSVerify skips the repository's certificate check.
	InsecureSkipTLSVerify types.Bool   `tfsdk:"insecure_skip_tls_verify"`
	DependencyUpdate      types.Bool   `tfsdk:"dependency_update"`
	Version               types.String `tfsdk:"version"`
	Values                types.List   `tfsdk:"values"`
	Set                   types.Map    `tfsdk:"set"`
	SetSensitive          types.Map    `tfsdk:"set_sensitive"`
	ValuesSensitive       types.List   `tfsdk:"values_sensitive"`
	Atomic                types.Bool   `tfsdk:"atomic"`
	Wait                  types.Bool   `tfsdk:"wait"`
	Timeout               types.String `tfsdk:"timeout"`
	BlockedTimeout        types.String `tfsdk:"blocked_timeout"`
	MaxHistory            types.Int64  `tfsdk:"max_history"`
	Description           types.String `tfsdk:"description"`
	RecoverPending        types.Bool   `tfsdk:"recover_pending"`
	RunTests              types.Bool   `tfsdk:"run_tests"`
	TakeOwnership         types.Bool   `tfsdk:"take_ownership"`
	Cascade               types.String `tfsdk:"cascade"`
	ForceReplace          types.Bool   `tfsdk:"force_replace"`
	PlanChecks            types.String `tfsdk:"plan_checks"`
	IgnoreDifferences     types.List   `tfsdk:"ignore_differences"`
	Patches               types.List   `tfsdk:"patches"`
	CRDsFrom              types.List   `tfsdk:"crds_from"`
	CRDs                  types.List   `tfsdk:"crds"`
	CRDPolicy             types.String `tfsdk:"crd_policy"`
	Manifests             types.Map    `tfsdk:"manifests"`
	Revision              types.Int64  `tfsdk:"revision"`
	Status                types.String `tfsdk:"status"`
	ChartVersion          types.String `tfsdk:"chart_version"`
	AppVersion            types.String `tfsdk:"app_version"`
	ChartDigest           types.String `tfsdk:"chart_digest"`
	URLs                  types.List   `tfsdk:"urls"`

	// redactor holds the redactor of the release's latest rendering (see redactorFor); made by
	// readRelease, read by the release's log and diagnostics.
	redactor *atomic.Pointer[manifest.Redactor]
}

func (r *releaseResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_release"
}

func (r *releaseResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *releaseResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	requiresReplace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: releaseResourceDescription,
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`<namespace>/<name>`, the form `terraform import` takes.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Required: true,
				MarkdownDescription: fmt.Sprintf("Name of the Helm release: at most %d characters, lowercase letters, digits, `-` and `.`, "+
					"starting and ending with a letter or digit. Changing it replaces the release.", chart.MaxReleaseNameLength),
				Validators:    []validator.String{releaseNameValidator{}},
				PlanModifiers: requiresReplace,
			},
			"namespace": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Namespace of the release, usually `gitlabk8s_environment.<name>.namespace`. It must exist; the release " +
					"does not create it. " + gitlab.NamespaceRules + ". Changing it replaces the release.",
				Validators:    []validator.String{releaseNamespaceValidator{}},
				PlanModifiers: requiresReplace,
			},
			"chart": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The chart: a local chart directory (`./charts/web`), a packaged chart (`./web-1.2.3.tgz`), a chart name in " +
					"the HTTP(S) repository given by `repository`, or an OCI reference (`oci://registry.example.com/charts/web`).",
			},
			"repository": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "URL of the HTTP(S) chart repository that holds `chart`, or an `oci://` registry path `chart` is " +
					"appended to. Leave unset for local charts and full `oci://` references.",
			},
			"repository_username": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "User name for the chart repository or OCI registry.",
			},
			"repository_password": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "Password or token for the chart repository or OCI registry. It never appears in plans or logs.",
			},
			"plain_http":               plainHTTPAttribute(),
			"repository_ca_file":       repositoryCAFileAttribute(),
			"repository_cert_file":     repositoryCertFileAttribute(),
			"repository_key_file":      repositoryKeyFileAttribute(),
			"insecure_skip_tls_verify": insecureSkipTLSVerifyAttribute(),
			"dependency_update": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
				MarkdownDescription: "For a chart directory, fetch the dependencies its `Chart.yaml` lists into its `charts/` directory before " +
					"rendering, as `helm dependency build` does: the versions `Chart.lock` records when there is one (a `Chart.lock` out " +
					"of step with `Chart.yaml` is an error), else the newest versions the constraints allow, writing `Chart.lock`. " +
					"`file://`, HTTP(S) repository and `oci://` dependencies are fetched; nothing is fetched when `charts/` already " +
					"holds them. Without it, a dependency missing from `charts/` fails the plan, naming it. Default `false`.",
			},
			"version": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Chart version: an exact version, or a constraint (`~1.2.0`) that must resolve to exactly one version " +
					"of a remote chart. Unset means the newest stable version of a remote chart; for a local chart it is checked when set. " +
					"The resolved version is `chart_version`; the content digest `chart_digest` shows a chart republished under the same version.",
			},
			"values": schema.ListAttribute{
				Optional:    true,
				ElementType: yamlType{},
				Validators:  []validator.List{yamlListValidator{}},
				MarkdownDescription: "Values as YAML documents, merged in order like `helm -f` files: maps merge key by key, anything else in " +
					"a later document replaces the earlier value. Documents are compared by meaning, so key order, indentation and comments " +
					"never change the rendered manifests. Invalid YAML is refused at plan time with its line.",
			},
			"set": schema.MapAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Values by Helm path, applied after `values`, like `helm --set`: `{\"image.tag\" = \"1.2.3\"}`. " +
					"`true`/`false`, `null` and integers are typed as `--set` types them; the value is taken literally (commas and braces included).",
			},
			"values_sensitive": schema.ListAttribute{
				Optional:    true,
				Sensitive:   true,
				ElementType: yamlType{sensitive: true},
				Validators:  []validator.List{yamlListValidator{sensitive: true}},
				MarkdownDescription: "Sensitive values as YAML documents, for instance `yamlencode` of sensitive variables: merged like `values`, " +
					"after `values` and before `set` and `set_sensitive`, as later `helm -f` files are. Every string and number in them (not the " +
					"keys) is a sensitive value: it never shows in `manifests`, diagnostics or logs, nor does what the chart derives from it. " +
					"Invalid YAML is refused at plan time with its line, without quoting the document.",
			},
			"set_sensitive": schema.MapAttribute{
				Optional:    true,
				Sensitive:   true,
				ElementType: types.StringType,
				MarkdownDescription: "Sensitive values by Helm path, applied last, always as strings (`helm --set-string`). Each value is " +
					"replaced by a marker wherever it lands in a rendered object (a Secret, a ConfigMap, an environment variable, " +
					"an annotation), in `manifests`, in diagnostics and in the provider's logs.",
			},
			"atomic": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(defaultReleaseAtomic),
				MarkdownDescription: "Undo a failed apply: a failed upgrade is rolled back to the last successful revision, a failed first " +
					"install is uninstalled, and the error says so. Default `true`.",
			},
			"wait": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(defaultReleaseWait),
				MarkdownDescription: "Wait until every object is ready, every Job complete and every `LoadBalancer` Service has an " +
					"address (as `helm --wait` does). The wait fails within seconds, naming the object, Kubernetes' reason and its " +
					"message, when nothing will change by waiting: a pod crash-loops, cannot pull its image or cannot be configured; a " +
					"controller cannot create pods because a ResourceQuota, a LimitRange, Pod Security admission or an admission webhook " +
					"refuses them; a PersistentVolumeClaim names a StorageClass that does not exist, or none where the cluster has no " +
					"default; a Job (a hook too) fails, with its pod; a Deployment exceeds its progress deadline. What might still clear " +
					"by itself (a pod no node can take yet, which a cluster autoscaler may fix; a provisioner that keeps failing; a " +
					"readiness probe that fails; a load balancer without an address) is named in the progress and in the timeout's " +
					"error, and fails the wait early with `blocked_timeout`. Progress (`ready x/y` per workload, and why an object " +
					"waits) is logged at level INFO (`TF_LOG_PROVIDER=INFO`). Default `true`.",
			},
			"timeout": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(defaultReleaseTimeout),
				MarkdownDescription: "How long each Helm operation (hooks, the wait, a rollback, the uninstall on destroy) may take, as a Go duration (`90s`, `10m`). Default `" + defaultReleaseTimeout + "`.",
				Validators:          []validator.String{durationValidator{}},
			},
			"blocked_timeout": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "How long an object may stay blocked, during the wait, for a reason that might still clear by " +
					"itself before the apply fails with that reason, as a Go duration (`30s`): a pod the scheduler cannot place " +
					"(`Unschedulable`: resources, node selectors, taints, affinity), a volume its provisioner fails to create " +
					"(`ProvisioningFailed`), a pod whose controller cannot create it for a reason that may pass (a quota that " +
					"terminating pods will free, a webhook that did not answer), a container failing its readiness probe " +
					"(`Unhealthy`), a `LoadBalancer` Service without an address. Unset (the default), they are waited for until " +
					"`timeout`, whose error then names them and this attribute; set it on clusters without an autoscaler, where such a pod " +
					"never fits.",
				Validators: []validator.String{durationValidator{}},
			},
			"max_history": schema.Int64Attribute{
				Optional:            true,
				Computed:            true,
				Default:             int64default.StaticInt64(defaultReleaseMaxHistory),
				MarkdownDescription: fmt.Sprintf("How many revisions Helm keeps; `0` keeps all. Default `%d`.", defaultReleaseMaxHistory),
				Validators:          []validator.Int64{int64validator.AtLeast(0)},
			},
			"description": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Description recorded with the revision, shown by `helm history`. Default, in a GitLab CI job: who applied it (`GITLAB_USER_LOGIN`), " +
					"from which pipeline, job, commit and merge request. Whether or not it is set, every revision also carries the release labels " +
					quoted(gitlab.ReleaseLabels) + " (pipeline and job IDs, commit SHA, merge request IID, user login, as valid label values), " +
					"so `helm list --selector " + gitlab.ReleaseLabelUser + "=<login>` finds a user's releases.",
			},
			"run_tests": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
				MarkdownDescription: "Run the chart's test hooks (`helm.sh/hook: test`) after every install or upgrade that succeeded, as " +
					"`helm test` does, and fail the apply when one fails, naming its pod and why. With `atomic`, a failed test undoes the " +
					"revision as a failed rollout does. Test hooks are deleted as their `helm.sh/hook-delete-policy` says and never " +
					"appear in `manifests`. Default `false`.",
			},
			"take_ownership": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
				MarkdownDescription: "Take over what exists instead of failing on it, as `helm install --take-ownership` does. A release " +
					"that exists in the cluster but not in the state (installed with `helm install`, or left by a lost state) is upgraded " +
					"from its deployed revision, which the plan names in a warning with the difference from what is deployed. Objects " +
					"that exist without Helm's ownership metadata (created with `kubectl apply`) are adopted, and so are objects " +
					"kept by the uninstall of a release that no longer exists. Objects that belong to another Helm release are refused " +
					"at plan time, naming it. Default `false`: such a release fails the plan, naming " +
					"`terraform import`, and so does an object the apply would create that exists without the release's Helm ownership " +
					"metadata, naming it.",
			},
			"recover_pending": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(defaultRecoverPending),
				MarkdownDescription: "Recover a release that a killed run (SIGKILL, a lost CI runner) left `pending-install`, `pending-upgrade` " +
					"or `pending-rollback`, instead of failing with Helm's `another operation (install/upgrade/rollback) is in progress`. " +
					"A pending install is uninstalled and installed again; a pending upgrade or rollback is marked failed, rolled back to the last deployed revision when there is one, and upgraded. " +
					"Terraform's state lock guarantees no other run is operating on the release. Default `true`.",
			},
			"plan_checks": schema.StringAttribute{
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(planChecksAll),
				MarkdownDescription: "What the plan checks before it shows the release (see \"What the plan checks\"): `" + planChecksAll +
					"` (the default) checks API versions against the target Kubernetes version and fields against the cluster's own schemas, " +
					"and dry-runs the changed objects on the cluster, when it is reachable; `" + planChecksOffline + "` asks the cluster " +
					"nothing and checks fields against the schema the provider ships, for a plan identity that may only read; `" + planChecksNone + "` checks nothing, for a chart the checks wrongly refuse (the apply still fails on what the " +
					"API server refuses).",
				Validators: []validator.String{stringvalidator.OneOf(planCheckLevels...)},
			},
			"force_replace": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
				MarkdownDescription: "Replace the objects whose change the API server refuses because a field cannot change once set (a " +
					"Deployment's selector, a Job's template, a StatefulSet's `volumeClaimTemplates`, a Service's `clusterIP`): the apply " +
					"deletes each such object and Helm creates it again, as `kubectl replace --force` does. The plan names them in a " +
					"warning. Without it (the default), the plan fails on such a change. Replacing an object interrupts what it runs. A " +
					"StatefulSet's PersistentVolumeClaims outlive it (unless its `persistentVolumeClaimRetentionPolicy` says otherwise): the " +
					"claims that exist keep their size, and a changed `volumeClaimTemplates` shapes only the claims created afterwards.",
			},
			"cascade": schema.StringAttribute{
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(defaultReleaseCascade),
				MarkdownDescription: "How destroy deletes what the release's objects own, as `helm uninstall --cascade` does. " +
					"`background` (the default, as in Helm and kubectl): destroy deletes the release's objects and waits until they are gone; " +
					"the garbage collector then removes what they owned (a Deployment's ReplicaSets and pods) in the background. " +
					"`foreground`: each object is gone only after what it owns is gone, so destroy returns once the pods have terminated. " +
					"`orphan`: what the objects owned is left running. Changing it changes nothing in the cluster.",
				Validators: []validator.String{stringvalidator.OneOf(releaseCascades...)},
			},
			"ignore_differences": ignoreDifferencesAttribute(),
			"patches":            patchesAttribute(),
			"crds_from":          crdsFromAttribute(),
			"crds":               crdsAttribute(),
			"crd_policy":         crdPolicyAttribute(),
			"manifests": schema.MapAttribute{
				Computed:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Every object of the release, rendered at plan time: one normalized YAML manifest per object (keys " +
					"sorted, nothing the server sets), keyed `<Kind>[.<group>]/[<namespace>/]<name>` (the namespace only when it is not " +
					"the release's), e.g. `Deployment.apps/web`, `ConfigMap/web-config`. CRDs from the chart's `crds/` and hooks are " +
					"included; hooks keep their `helm.sh/hook` annotations; test hooks, which only `helm test` runs, are not. An object holding a " +
					"value the chart generates for the first time (`randAlphaNum`, `uuidv4`, `genCA`) is unknown until the apply. Secret `data` and `stringData` values, `set_sensitive` " +
					"values and what the chart derives from them read `(sensitive value hmac:<12 hex>)`, an HMAC keyed per release (see " +
					"\"Change markers\"), or `(sensitive value)` in the first plan of a release. On refresh it holds the live " +
					"values of the fields the chart sets, so a change made with kubectl or a deleted object shows in the next plan.",
			},
			"revision": schema.Int64Attribute{
				Computed:            true,
				MarkdownDescription: "The release's current revision, as `helm history` numbers it.",
			},
			"status": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Helm's status of the current revision: `deployed`, `failed`, `pending-install`, `pending-upgrade`, `pending-rollback`, ...",
			},
			"chart_version": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The exact version of the chart that is rendered.",
			},
			"app_version": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The chart's `appVersion`.",
			},
			"chart_digest": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "`sha256:<hex>` of the chart package (remote charts and `.tgz` files) or of the chart's files (directories). " +
					"A chart republished under the same version changes it.",
			},
			"urls": urlsAttribute(),
		},
	}
}

const releaseResourceDescription = "A Helm release whose plan shows exactly what will change.\n\n" +
	"The plan renders the chart with Helm's engine (no cluster writes; `lookup` reads only the release's namespace) and shows one manifest per " +
	"object in `manifests`, so `terraform plan` lists the objects added, removed or changed and, for a changed object, only the " +
	"changed lines. `.Capabilities` uses the provider's `kube_version` and `api_versions` when set, else the cluster's version and API " +
	"versions, so a merge-request pipeline can plan without cluster credentials. Secret values and `set_sensitive` values never appear.\n\n" +
	"Apply installs or upgrades a real Helm release (`helm list`, `helm history` and `helm rollback` work on it); hooks run and CRDs in " +
	"`crds/` are created as Helm creates them; test hooks are left to `helm test`. What is applied is what the plan showed: values a chart " +
	"generates (`randAlphaNum`, `genCA`) are known after apply the first time and kept from what was applied afterwards, and when the chart " +
	"renders anything else at apply than the plan showed, the apply fails before touching the cluster, naming the object. Cancelling Terraform (Ctrl-C, " +
	"SIGTERM) stops the operation and records the release as failed rather than pending; `recover_pending` handles runs that were killed.\n\n" +
	"Destroy uninstalls the release and waits until its objects are gone; `cascade` says whether it also waits for what they own " +
	"(a Deployment's pods)."

// cascade returns the destroy's deletion cascade; the schema's default and validator
// guarantee one of releaseCascades, and state written before the attribute existed has none.
func (m *releaseModel) cascade() helmrelease.Cascade {
	if m.Cascade.IsNull() || m.Cascade.IsUnknown() || m.Cascade.ValueString() == "" {
		return helmrelease.CascadeBackground
	}
	return helmrelease.Cascade(m.Cascade.ValueString())
}

// timeoutDuration returns the configured timeout; validation guarantees it parses.
func (m *releaseModel) timeoutDuration() time.Duration {
	d, err := time.ParseDuration(m.Timeout.ValueString())
	if err != nil || m.Timeout.IsNull() || m.Timeout.IsUnknown() {
		d, _ = time.ParseDuration(defaultReleaseTimeout)
	}
	return d
}

// blockedTimeoutDuration returns blocked_timeout, or 0 when it is not set.
func (m *releaseModel) blockedTimeoutDuration() time.Duration {
	if m.BlockedTimeout.IsNull() || m.BlockedTimeout.IsUnknown() {
		return 0
	}
	d, _ := time.ParseDuration(m.BlockedTimeout.ValueString())
	return d
}

func (m *releaseModel) releaseID() string {
	return m.Namespace.ValueString() + "/" + m.Name.ValueString()
}

func (r *releaseResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	namespace, name, ok := strings.Cut(req.ID, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		resp.Diagnostics.Append(noRelease.Error("Invalid Import ID", fmt.Sprintf(
			"The import ID %q is not of the form <namespace>/<name>. Use the namespace and the name of the Helm release, as `helm list -A` shows them, e.g. review-42/web.", req.ID)))
		return
	}
	for attr, value := range map[string]any{
		"id": req.ID, "name": name, "namespace": namespace,
		"atomic": defaultReleaseAtomic, "wait": defaultReleaseWait, "timeout": defaultReleaseTimeout,
		"max_history": int64(defaultReleaseMaxHistory), "recover_pending": defaultRecoverPending, "plain_http": false, "run_tests": false,
		"take_ownership": false,
		"cascade":        defaultReleaseCascade, "force_replace": false, "crd_policy": crdPolicyCreate, "plan_checks": planChecksAll, "dependency_update": false,
		"insecure_skip_tls_verify": false,
	} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attr), value)...)
	}
	resp.Diagnostics.Append(markImported(ctx, resp.Private)...)
}

// releaseNameValidator applies Helm's rules for release names.
type releaseNameValidator struct{}

var _ validator.String = releaseNameValidator{}

func (releaseNameValidator) Description(context.Context) string {
	return fmt.Sprintf("a Helm release name: at most %d characters of lowercase letters, digits, '-' and '.'", chart.MaxReleaseNameLength)
}

func (v releaseNameValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (releaseNameValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := chart.ValidateReleaseName(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.Append(noRelease.AttributeError(req.Path, "Invalid Release Name", "Helm cannot use this release name. Choose a shorter or simpler name.\n\n"+err.Error()))
	}
}

// releaseNamespaceValidator checks the namespace is a valid namespace name.
type releaseNamespaceValidator struct{}

var _ validator.String = releaseNamespaceValidator{}

func (releaseNamespaceValidator) Description(context.Context) string {
	return "a Kubernetes namespace name: " + gitlab.NamespaceRules
}

func (v releaseNamespaceValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (releaseNamespaceValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := gitlab.ValidateNamespace(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.Append(noRelease.AttributeError(req.Path, "Invalid Namespace", "The release's namespace is not a valid namespace name.\n\n"+err.Error()))
	}
}

// durationValidator checks a Go duration such as "90s" or "10m".
type durationValidator struct{}

var _ validator.String = durationValidator{}

func (durationValidator) Description(context.Context) string {
	return "a positive Go duration such as `90s` or `10m`"
}

func (v durationValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (durationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	d, err := time.ParseDuration(req.ConfigValue.ValueString())
	if err != nil || d <= 0 {
		resp.Diagnostics.Append(noRelease.AttributeError(req.Path, "Invalid Duration",
			fmt.Sprintf("%q is not a positive duration. Use a number with a unit: `90s`, `10m`, `1h`.", req.ConfigValue.ValueString())))
	}
}
