package provider

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
)

// providerModel is the provider block.
type providerModel struct {
	ConfigPath           types.String `tfsdk:"config_path"`
	ConfigContext        types.String `tfsdk:"config_context"`
	Host                 types.String `tfsdk:"host"`
	Token                types.String `tfsdk:"token"`
	ClusterCACertificate types.String `tfsdk:"cluster_ca_certificate"`
	ClientCertificate    types.String `tfsdk:"client_certificate"`
	ClientKey            types.String `tfsdk:"client_key"`
	Insecure             types.Bool   `tfsdk:"insecure"`
	Exec                 *execModel   `tfsdk:"exec"`
	KubeVersion          types.String `tfsdk:"kube_version"`
	APIVersions          types.List   `tfsdk:"api_versions"`
	GitLab               *gitlabModel `tfsdk:"gitlab"`
}

type execModel struct {
	APIVersion types.String `tfsdk:"api_version"`
	Command    types.String `tfsdk:"command"`
	Args       types.List   `tfsdk:"args"`
	Env        types.Map    `tfsdk:"env"`
}

type gitlabModel struct {
	ProjectID       types.String `tfsdk:"project_id"`
	ProjectPathSlug types.String `tfsdk:"project_path_slug"`
	EnvironmentName types.String `tfsdk:"environment_name"`
	EnvironmentSlug types.String `tfsdk:"environment_slug"`
	PipelineURL     types.String `tfsdk:"pipeline_url"`
	JobURL          types.String `tfsdk:"job_url"`
	CommitSHA       types.String `tfsdk:"commit_sha"`
	MergeRequestIID types.String `tfsdk:"merge_request_iid"`
	UserLogin       types.String `tfsdk:"user_login"`
}

// envPrefix prefixes the environment-variable fallback of each provider attribute.
const envPrefix = "GITLABK8S_"

// envCacheDir names the folder the OpenAPI documents are kept in between provider processes.
const envCacheDir = envPrefix + "CACHE_DIR"

// envFallback names the environment variable read when an attribute is unset.
func envFallback(attr string) string { return envPrefix + strings.ToUpper(attr) }

func fallbackNote(attr string) string {
	return fmt.Sprintf(" When unset, the `%s` environment variable is used.", envFallback(attr))
}

func (p *gitlabk8sProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	gitlabAttrs := map[string]schema.Attribute{}
	for _, v := range gitlabVariables {
		gitlabAttrs[v.attr] = schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: v.description + fmt.Sprintf(" Defaults to the job's `%s` variable.", v.variable),
		}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Manages GitLab environments on Kubernetes: one namespace per environment, created on apply and deleted on destroy, " +
			"and Helm releases whose plans show the complete rendered manifests with exact, secret-safe diffs.\n\n" +
			"The cluster is found, in this order: an explicit `host`; else the kubeconfig file in `config_path`; else the files listed in `$KUBECONFIG`, " +
			"merged the way kubectl merges them; else `~/.kube/config`; else the in-cluster service account. The provider connects only when a " +
			"resource needs the cluster, so values unknown until apply are fine.",
		Attributes: map[string]schema.Attribute{
			"config_path": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Path of a kubeconfig file. When unset, `$KUBECONFIG` (a colon-separated list of files) is used, then `~/.kube/config`." + fallbackNote("config_path"),
			},
			"config_context": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Kubeconfig context to use; by default the kubeconfig's current context. In a GitLab CI job that uses the GitLab agent for Kubernetes, " +
					"contexts are named `<agent configuration project path>:<agent name>`, for example `my-group/cluster-config:review`." + fallbackNote("config_context"),
			},
			"host": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Address of the Kubernetes API server, e.g. `https://k8s.example.com:6443`. When set, the kubeconfig is not read and `token`, `cluster_ca_certificate`, `client_certificate`, `client_key`, `insecure` and `exec` describe the connection." + fallbackNote("host"),
			},
			"token": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "Bearer token used with `host`." + fallbackNote("token"),
			},
			"cluster_ca_certificate": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "PEM-encoded CA certificate that verifies the API server's certificate, used with `host`." + fallbackNote("cluster_ca_certificate"),
			},
			"client_certificate": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "PEM-encoded client certificate, used with `host` and `client_key`." + fallbackNote("client_certificate"),
			},
			"client_key": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "PEM-encoded private key of `client_certificate`." + fallbackNote("client_key"),
			},
			"insecure": schema.BoolAttribute{
				Optional:            true,
				MarkdownDescription: "Skip verification of the API server's certificate, used with `host`. Only for throwaway clusters." + fallbackNote("insecure"),
			},
			"exec": schema.SingleNestedAttribute{
				Optional:            true,
				MarkdownDescription: "A credential plugin that prints an ExecCredential, used with `host` (as `users[].user.exec` of a kubeconfig).",
				Attributes: map[string]schema.Attribute{
					"api_version": schema.StringAttribute{Required: true, MarkdownDescription: "API version of the ExecCredential, e.g. `client.authentication.k8s.io/v1`."},
					"command":     schema.StringAttribute{Required: true, MarkdownDescription: "Command to run."},
					"args":        schema.ListAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Arguments of the command."},
					"env":         schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Environment variables of the command."},
				},
			},
			"kube_version": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Kubernetes version used for `.Capabilities.KubeVersion` when rendering charts, e.g. `1.37.2`. When unset, the cluster's version is used " +
					"when the cluster is reachable. Pin it to plan releases in a merge-request pipeline that has no cluster credentials. A plan with neither " +
					"renders with `" + chart.DefaultKubeVersion + "`, Helm 3's default, whichever Helm and Kubernetes libraries the provider is built with." + fallbackNote("kube_version"),
			},
			"api_versions": schema.ListAttribute{
				Optional:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "Extra API versions for `.Capabilities.APIVersions` when rendering charts offline, e.g. `monitoring.coreos.com/v1`. `GITLABK8S_API_VERSIONS` (comma-separated) is used when unset.",
			},
			"gitlab": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: "GitLab CI metadata used for namespace names, labels and annotations. Each value defaults to the matching predefined " +
					"variable of the CI job, so inside GitLab CI this block is usually omitted.",
				Attributes: gitlabAttrs,
			},
		},
	}
}

// gitlabVariable ties a `gitlab` block attribute to the CI variable it defaults to.
type gitlabVariable struct {
	attr, variable, description string
	set                         func(*gitlab.CIMetadata, string)
	get                         func(*gitlabModel) types.String
}

var gitlabVariables = []gitlabVariable{
	{"project_id", "CI_PROJECT_ID", "GitLab project ID, part of default namespace names.", func(m *gitlab.CIMetadata, v string) { m.ProjectID = v }, func(g *gitlabModel) types.String { return g.ProjectID }},
	{"project_path_slug", "CI_PROJECT_PATH_SLUG", "Slug of the project path, part of default namespace names and the `app.gitlab.com/app` annotation.", func(m *gitlab.CIMetadata, v string) { m.ProjectPathSlug = v }, func(g *gitlabModel) types.String { return g.ProjectPathSlug }},
	{"environment_name", "CI_ENVIRONMENT_NAME", "Name of the job's environment; an environment of that name uses `environment_slug` as its slug.", func(m *gitlab.CIMetadata, v string) { m.EnvironmentName = v }, func(g *gitlabModel) types.String { return g.EnvironmentName }},
	{"environment_slug", "CI_ENVIRONMENT_SLUG", "GitLab's slug of the job's environment.", func(m *gitlab.CIMetadata, v string) { m.EnvironmentSlug = v }, func(g *gitlabModel) types.String { return g.EnvironmentSlug }},
	{"pipeline_url", "CI_PIPELINE_URL", "Pipeline URL, recorded on apply in an annotation; never causes a diff.", func(m *gitlab.CIMetadata, v string) { m.PipelineURL = v }, func(g *gitlabModel) types.String { return g.PipelineURL }},
	{"job_url", "CI_JOB_URL", "Job URL, recorded on apply in an annotation; never causes a diff.", func(m *gitlab.CIMetadata, v string) { m.JobURL = v }, func(g *gitlabModel) types.String { return g.JobURL }},
	{"commit_sha", "CI_COMMIT_SHA", "Commit SHA, recorded on apply in an annotation; never causes a diff.", func(m *gitlab.CIMetadata, v string) { m.CommitSHA = v }, func(g *gitlabModel) types.String { return g.CommitSHA }},
	{"merge_request_iid", "CI_MERGE_REQUEST_IID", "Merge request IID, recorded on apply in an annotation; never causes a diff.", func(m *gitlab.CIMetadata, v string) { m.MergeRequestIID = v }, func(g *gitlabModel) types.String { return g.MergeRequestIID }},
	{"user_login", "GITLAB_USER_LOGIN", "Login of the user the pipeline runs for, recorded with every release revision; never causes a diff.", func(m *gitlab.CIMetadata, v string) { m.UserLogin = v }, func(g *gitlabModel) types.String { return g.UserLogin }},
}

// providerData is what every resource and data source receives from Configure.
type providerData struct {
	conn        *kube.Connection
	ci          gitlab.CIMetadata
	kubeVersion string
	apiVersions []string
	version     string
	// getenv reads the environment, for data sources with environment fallbacks.
	getenv func(string) string
	// refreshed hands a release's history from its refresh to its plan.
	refreshed refreshedHistories
	// planned hands the Pod Security level an environment's plan sets to its releases' plans.
	planned plannedNamespaces
}

func (p *gitlabk8sProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	data := &providerData{version: p.version, ci: gitlab.CIMetadataFromEnv(p.getenv), getenv: p.getenv}
	if cfg.GitLab != nil {
		for _, v := range gitlabVariables {
			if val := v.get(cfg.GitLab); !val.IsNull() && !val.IsUnknown() {
				v.set(&data.ci, val.ValueString())
			}
		}
	}
	data.kubeVersion = p.stringOrEnv(cfg.KubeVersion, "kube_version")
	if !cfg.APIVersions.IsNull() && !cfg.APIVersions.IsUnknown() {
		resp.Diagnostics.Append(cfg.APIVersions.ElementsAs(ctx, &data.apiVersions, false)...)
	} else if env := p.getenv(envPrefix + "API_VERSIONS"); env != "" {
		for _, v := range strings.Split(env, ",") {
			if v = strings.TrimSpace(v); v != "" {
				data.apiVersions = append(data.apiVersions, v)
			}
		}
	}

	if unknown := unknownConnectionAttributes(cfg); len(unknown) > 0 {
		// A cluster created in the same run: connect in a later phase, when the values are known.
		data.conn = kube.NewUnavailableConnection(fmt.Errorf("the provider's %s is not known until apply; the cluster is contacted once it is known", strings.Join(unknown, ", ")))
		p.share(resp, data)
		return
	}

	opts := kube.Options{
		ConfigPath:           p.stringOrEnv(cfg.ConfigPath, "config_path"),
		KubeconfigEnv:        p.getenv("KUBECONFIG"),
		Context:              p.stringOrEnv(cfg.ConfigContext, "config_context"),
		Host:                 p.stringOrEnv(cfg.Host, "host"),
		Token:                p.stringOrEnv(cfg.Token, "token"),
		ClusterCACertificate: p.stringOrEnv(cfg.ClusterCACertificate, "cluster_ca_certificate"),
		ClientCertificate:    p.stringOrEnv(cfg.ClientCertificate, "client_certificate"),
		ClientKey:            p.stringOrEnv(cfg.ClientKey, "client_key"),
		UserAgent:            "terraform-provider-gitlabk8s/" + p.version,
		// A request repeated after a dropped connection or a busy API server shows in the log
		// with what failed; Helm's requests carry no context of ours, so the provider's is used.
		OnRetry:  func(r kube.Retry) { tflog.Warn(ctx, r.String()) },
		CacheDir: p.cacheDir(),
	}
	if !cfg.Insecure.IsNull() {
		opts.Insecure = cfg.Insecure.ValueBool()
	} else if env := p.getenv(envFallback("insecure")); env != "" {
		insecure, err := strconv.ParseBool(env)
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("insecure"), "Invalid Provider Configuration",
				fmt.Sprintf("%s must be true or false, not %q.", envFallback("insecure"), env))
			return
		}
		opts.Insecure = insecure
	}
	if cfg.Exec != nil {
		opts.Exec = &kube.ExecOptions{APIVersion: cfg.Exec.APIVersion.ValueString(), Command: cfg.Exec.Command.ValueString()}
		resp.Diagnostics.Append(cfg.Exec.Args.ElementsAs(ctx, &opts.Exec.Args, false)...)
		resp.Diagnostics.Append(cfg.Exec.Env.ElementsAs(ctx, &opts.Exec.Env, false)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}

	// A configuration no client can be built from only matters to what needs the cluster: a
	// merge-request pipeline plans with kube_version and whatever $KUBECONFIG its runner has.
	// The first operation that connects reports it, naming itself and the setting.
	if _, _, err := kube.Resolve(opts); err != nil {
		data.conn = kube.NewUnavailableConnection(&kubeConfigError{setting: configErrorSetting(opts, err), err: err})
		p.share(resp, data)
		return
	}
	data.conn = kube.NewConnection(opts)
	p.share(resp, data)
}

func (p *gitlabk8sProvider) share(resp *provider.ConfigureResponse, data *providerData) {
	resp.ResourceData = data
	resp.DataSourceData = data
}

// configErrorSetting names the setting a resolution error comes from, or "" when nothing
// was configured at all.
func configErrorSetting(opts kube.Options, err error) string {
	switch {
	case opts.Host != "":
		return "host"
	case opts.Context != "" && errors.As(err, new(*kube.ContextError)):
		return "config_context"
	case opts.ConfigPath != "":
		return "config_path"
	case opts.KubeconfigEnv != "":
		return "$KUBECONFIG"
	case opts.Context != "":
		return "config_context"
	default:
		return ""
	}
}

// cacheDir is the folder that keeps what one provider process downloads for the next:
// $GITLABK8S_CACHE_DIR, else one under the user's cache folder.
func (p *gitlabk8sProvider) cacheDir() string {
	if dir := p.getenv(envCacheDir); dir != "" {
		return dir
	}
	return kube.DefaultCacheDir()
}

func (p *gitlabk8sProvider) stringOrEnv(v types.String, attr string) string {
	if !v.IsNull() && !v.IsUnknown() {
		return v.ValueString()
	}
	return p.getenv(envFallback(attr))
}

func unknownConnectionAttributes(cfg providerModel) []string {
	var unknown []string
	for name, v := range map[string]interface{ IsUnknown() bool }{
		"config_path": cfg.ConfigPath, "config_context": cfg.ConfigContext, "host": cfg.Host, "token": cfg.Token,
		"cluster_ca_certificate": cfg.ClusterCACertificate, "client_certificate": cfg.ClientCertificate,
		"client_key": cfg.ClientKey, "insecure": cfg.Insecure,
	} {
		if v.IsUnknown() {
			unknown = append(unknown, name)
		}
	}
	if cfg.Exec != nil && (cfg.Exec.Command.IsUnknown() || cfg.Exec.Args.IsUnknown() || cfg.Exec.Env.IsUnknown()) {
		unknown = append(unknown, "exec")
	}
	return sortedStrings(unknown)
}

// errNotConfigured is returned by resources used before Configure ran.
var errNotConfigured = errors.New("the provider is not configured")
