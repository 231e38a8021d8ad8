package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	corev1 "k8s.io/api/core/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlabapi"
)

var (
	_ datasource.DataSourceWithConfigure      = (*namespacesDataSource)(nil)
	_ datasource.DataSourceWithValidateConfig = (*namespacesDataSource)(nil)
)

// Environment variables the data source falls back to.
const (
	envGitLabAPIURL = "CI_API_V4_URL"
	envGitLabToken  = envPrefix + "GITLAB_TOKEN"
	envJobToken     = "CI_JOB_TOKEN"
)

// namespacesDataSource is gitlabk8s_namespaces: the namespaces of a GitLab
// project's environments, and which of them are leftovers. The matching is
// gitlab.ProjectNamespaces; this file reads the cluster and GitLab for it.
type namespacesDataSource struct {
	data *providerData
	// environments builds the GitLab client; tests replace it.
	environments func(url, token string, kind gitlabapi.TokenKind, userAgent string) (environmentLister, error)
}

// environmentLister is the GitLab I/O the data source needs.
type environmentLister interface {
	ListEnvironments(ctx context.Context, project string) ([]gitlab.Environment, error)
}

// namespaceLister is the cluster I/O the data source needs.
type namespaceLister interface {
	ListNamespaces(ctx context.Context) ([]corev1.Namespace, error)
	WhoAmI(ctx context.Context) (string, error)
}

type namespacesModel struct {
	ProjectID       types.String `tfsdk:"project_id"`
	ProjectPathSlug types.String `tfsdk:"project_path_slug"`
	GitLabAPIURL    types.String `tfsdk:"gitlab_api_url"`
	GitLabToken     types.String `tfsdk:"gitlab_token"`
	Namespaces      types.Map    `tfsdk:"namespaces"`
}

// namespaceEntry is one element of namespaces.
type namespaceEntry struct {
	Name            string `tfsdk:"name"`
	UID             string `tfsdk:"uid"`
	Rule            string `tfsdk:"rule"`
	Owned           bool   `tfsdk:"owned"`
	EnvironmentName string `tfsdk:"environment_name"`
	EnvironmentSlug string `tfsdk:"environment_slug"`
	CreatedAt       string `tfsdk:"created_at"`
	AgeSeconds      int64  `tfsdk:"age_seconds"`
	Age             string `tfsdk:"age"`
	GitLabState     string `tfsdk:"gitlab_state"`
	Terminating     bool   `tfsdk:"terminating"`
	Stale           bool   `tfsdk:"stale"`
	ImportID        string `tfsdk:"import_id"`
}

func newNamespacesDataSource() datasource.DataSource {
	return &namespacesDataSource{environments: func(url, token string, kind gitlabapi.TokenKind, userAgent string) (environmentLister, error) {
		return gitlabapi.New(url, token, kind, nil, userAgent)
	}}
}

func (d *namespacesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_namespaces"
}

func (d *namespacesDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func quotedStates[T ~string](values []T) string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return quoted(out)
}

func (d *namespacesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	computed := func(description string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: description}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The namespaces of a GitLab project's environments, and which of them are leftovers. A namespace is listed when it carries " +
			"this provider's ownership marker (the label `" + gitlab.LabelManagedBy + "=" + gitlab.ManagedByValue + "` and the annotation `" +
			gitlab.AnnotationEnvironment + "`) with the project's ID in the label `" + gitlab.LabelProjectID + "` or, without that label, the project's path slug in `" +
			gitlab.AnnotationGitLabApp + "`, or when it has the name GitLab's " +
			"certificate-based Kubernetes integration gave the project's environments, `<project path slug>-<project id>-<environment slug>` " +
			"(shortened to 63 characters with a hash suffix when longer). Any other namespace is never listed.\n\n" +
			"When a GitLab API URL and token are known (inside GitLab CI, `$" + envGitLabAPIURL + "` and `$" + envJobToken + "`), each namespace also " +
			"says what GitLab's environments API reports for its environment, and `stale` marks those whose environment is stopped or gone: " +
			"the leftovers a janitor pipeline adopts with `import` blocks and destroys (see the guide \"Sweeping leftover namespaces\"). " +
			"Listing namespaces needs the cluster-wide right to `list` `namespaces`.",
		Attributes: map[string]schema.Attribute{
			"project_id": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Numeric ID of the GitLab project. Defaults to the provider's `gitlab.project_id`, else the job's `CI_PROJECT_ID`.",
			},
			"project_path_slug": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Slug of the project's path, as `CI_PROJECT_PATH_SLUG` (`my-group-my-app` for `my-group/my-app`). " +
					"Defaults to the provider's `gitlab.project_path_slug`, else the job's `CI_PROJECT_PATH_SLUG`.",
			},
			"gitlab_api_url": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "URL of GitLab's REST API, ending with `/api/v4`, e.g. `https://gitlab.example.com/api/v4`. Defaults to the job's `" + envGitLabAPIURL + "`. " +
					"Without it (and a token) GitLab is not asked: every `gitlab_state` is `unknown` and nothing is `stale`.",
			},
			"gitlab_token": schema.StringAttribute{
				Optional: true, Sensitive: true,
				MarkdownDescription: "A GitLab access token (personal, project or group) with the `read_api` scope and at least the Reporter role, sent as `PRIVATE-TOKEN`. " +
					"When unset, the `" + envGitLabToken + "` environment variable is used, else the job's `" + envJobToken + "` (sent as `JOB-TOKEN`; GitLab 16.2 and later " +
					"accept it for the environments API of the job's own project).",
			},
			"namespaces": schema.MapNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The project's namespaces, by name.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name": computed("The namespace's name."),
					"uid":  computed("The namespace's UID."),
					"rule": computed("Why the namespace is the project's: " + quotedStates(gitlab.MatchRules) + ". `marked`: it carries this provider's ownership marker; " +
						"`historical`: it has no marker and the historical name of one of the project's environments."),
					"owned": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the namespace carries this provider's ownership marker."},
					"environment_name": computed("The environment's name, from the ownership marker or from GitLab; empty when neither tells it " +
						"(a historical name whose environment GitLab no longer lists)."),
					"environment_slug": computed("The environment's slug, from the ownership marker, the namespace's name or GitLab; empty only for a name " +
						"shortened to 63 characters whose environment GitLab no longer lists."),
					"created_at":  computed("When the namespace was created, in RFC 3339 format."),
					"age_seconds": schema.Int64Attribute{Computed: true, MarkdownDescription: "How long the namespace has existed, in seconds."},
					"age":         computed("How long the namespace has existed, as a duration such as `72h0m0s`."),
					"gitlab_state": computed("What GitLab says of the environment: " + quotedStates(gitlab.EnvironmentStates) + ". `gone`: GitLab lists no such " +
						"environment (it was deleted); `unknown`: GitLab was not asked."),
					"terminating": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the namespace is already being deleted."},
					"stale": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the namespace is a leftover: its `gitlab_state` is one of " +
						quotedStates(gitlab.StaleStates) + " and the namespace is not already terminating. Never true for an `available` or `stopping` environment, " +
						"nor when GitLab was not asked."},
					"import_id": computed("The ID that imports exactly this namespace into a `gitlabk8s_environment`: `<name>" + importUIDSeparator + "<uid>`. " +
						"The import refuses a namespace of that name with another UID (deleted and created again since it was listed)."),
				}},
			},
		},
	}
}

// ValidateConfig reports bad values at `terraform validate`.
func (d *namespacesDataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var config namespacesModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateProject(config.ProjectID, config.ProjectPathSlug, &resp.Diagnostics)
	validateKnown(config.GitLabAPIURL, path.Root("gitlab_api_url"), "Invalid GitLab API URL", func(s string) error {
		_, err := gitlabapi.ParseBaseURL(s)
		return err
	}, &resp.Diagnostics)
	if !config.GitLabToken.IsNull() && !config.GitLabToken.IsUnknown() && strings.TrimSpace(config.GitLabToken.ValueString()) != config.GitLabToken.ValueString() {
		resp.Diagnostics.AddAttributeError(path.Root("gitlab_token"), "Invalid GitLab Token",
			"The token starts or ends with whitespace, which GitLab would reject. Remove it, e.g. with trimspace(...).")
	}
}

// validateKnown checks a set, known value with check and adds an error on the attribute.
func validateKnown(v types.String, at path.Path, summary string, check func(string) error, diags *diag.Diagnostics) {
	if v.IsNull() || v.IsUnknown() {
		return
	}
	if err := check(v.ValueString()); err != nil {
		diags.AddAttributeError(at, summary, capitalize(err.Error())+".")
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func (d *namespacesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var config namespacesModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	project, ok := d.project(config, &resp.Diagnostics)
	if !ok {
		return
	}
	envs, apiURL, ok := d.readEnvironments(ctx, config, project, &resp.Diagnostics)
	if !ok {
		return
	}
	c := d.data.clients(ctx, "reading the data source gitlabk8s_namespaces", &resp.Diagnostics)
	if c == nil {
		return
	}
	metas, ok := listNamespaces(ctx, c, &resp.Diagnostics)
	if !ok {
		return
	}
	found := gitlab.ProjectNamespaces(project, metas, envs, time.Now())
	entries := make(map[string]namespaceEntry, len(found))
	for _, pn := range found {
		entries[pn.Name] = entryOf(pn)
	}
	tflog.Info(ctx, "found the project's namespaces", map[string]any{"project": project.ID, "namespaces": len(entries), "gitlab_asked": envs != nil})

	namespaces, diags := types.MapValueFrom(ctx, namespaceEntryType(), entries)
	resp.Diagnostics.Append(diags...)
	config.ProjectID = types.StringValue(project.ID)
	config.ProjectPathSlug = types.StringValue(project.PathSlug)
	config.GitLabAPIURL = types.StringValue(apiURL)
	config.Namespaces = namespaces
	resp.Diagnostics.Append(resp.State.Set(ctx, &config)...)
}

func entryOf(pn gitlab.ProjectNamespace) namespaceEntry {
	created := ""
	if !pn.Created.IsZero() {
		created = pn.Created.UTC().Format(time.RFC3339)
	}
	return namespaceEntry{
		Name: pn.Name, UID: pn.UID, Rule: string(pn.Rule), Owned: pn.Owned,
		EnvironmentName: pn.EnvironmentName, EnvironmentSlug: pn.EnvironmentSlug,
		CreatedAt: created, AgeSeconds: int64(pn.Age / time.Second), Age: pn.Age.String(),
		GitLabState: string(pn.State), Terminating: pn.Terminating, Stale: pn.Stale,
		ImportID: pn.Name + importUIDSeparator + pn.UID,
	}
}

func namespaceEntryType() types.ObjectType {
	return types.ObjectType{AttrTypes: map[string]attr.Type{
		"name": types.StringType, "uid": types.StringType, "rule": types.StringType, "owned": types.BoolType,
		"environment_name": types.StringType, "environment_slug": types.StringType, "created_at": types.StringType,
		"age_seconds": types.Int64Type, "age": types.StringType, "gitlab_state": types.StringType,
		"terminating": types.BoolType, "stale": types.BoolType, "import_id": types.StringType,
	}}
}

// project resolves the project from the configuration and the provider's CI metadata.
func (d *namespacesDataSource) project(config namespacesModel, diags *diag.Diagnostics) (gitlab.Project, bool) {
	var ci gitlab.CIMetadata
	if d.data != nil {
		ci = d.data.ci
	}
	project := gitlab.Project{ID: valueOr(config.ProjectID, ci.ProjectID), PathSlug: valueOr(config.ProjectPathSlug, ci.ProjectPathSlug)}
	if project.ID == "" || project.PathSlug == "" {
		diags.AddError("Missing GitLab Project", fmt.Sprintf(
			"The data source needs the project's numeric ID and path slug to recognise its namespaces, and has project_id %q and project_path_slug %q. "+
				"Inside GitLab CI they come from $%s and $%s; elsewhere set project_id and project_path_slug (or the provider's gitlab block).",
			project.ID, project.PathSlug, gitlab.EnvProjectID, gitlab.EnvProjectPathSlug))
		return project, false
	}
	validateProject(types.StringValue(project.ID), types.StringValue(project.PathSlug), diags)
	return project, !diags.HasError()
}

// validateProject checks a project ID and path slug, as configured (at validate time) or as
// resolved from the provider's CI metadata (at read time).
func validateProject(id, pathSlug types.String, diags *diag.Diagnostics) {
	validateKnown(id, path.Root("project_id"), "Invalid GitLab Project ID", gitlab.ValidateProjectID, diags)
	validateKnown(pathSlug, path.Root("project_path_slug"), "Invalid GitLab Project Path Slug", gitlab.ValidateProjectPathSlug, diags)
}

func valueOr(v types.String, fallback string) string {
	if v.IsNull() || v.IsUnknown() || v.ValueString() == "" {
		return fallback
	}
	return v.ValueString()
}

func (d *namespacesDataSource) getenv(name string) string {
	if d.data.getenv == nil {
		return ""
	}
	return d.data.getenv(name)
}
