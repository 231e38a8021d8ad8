package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/environment"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
)

var (
	_ resource.ResourceWithConfigure      = (*environmentResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*environmentResource)(nil)
	_ resource.ResourceWithValidateConfig = (*environmentResource)(nil)
	_ resource.ResourceWithImportState    = (*environmentResource)(nil)
)

var _ = registerResource(newEnvironmentResource)

// Default timeouts of the environment resource, documented in the schema.
const (
	defaultEnvironmentCreateTimeout = 5 * time.Minute
	defaultEnvironmentUpdateTimeout = 5 * time.Minute
	defaultEnvironmentDeleteTimeout = 5 * time.Minute
	// cleanupReadTimeout bounds a read made after an operation failed, to record what it left.
	cleanupReadTimeout = 15 * time.Second
)

// environmentResource is gitlabk8s_environment: one namespace per GitLab
// environment, with its companion objects. The objects come from package
// environment; this file and its siblings only translate between Terraform and
// that package and the cluster.
type environmentResource struct {
	data *providerData
}

func newEnvironmentResource() resource.Resource { return &environmentResource{} }

func (r *environmentResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_environment"
}

func (r *environmentResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func quoted(values []string) string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = "`" + v + "`"
	}
	return strings.Join(out, ", ")
}

func (r *environmentResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	ruleList := func(what string, required bool) schema.ListAttribute {
		return schema.ListAttribute{ElementType: types.StringType, Required: required, Optional: !required, MarkdownDescription: what}
	}
	quantityMap := func(what string) schema.MapAttribute {
		return schema.MapAttribute{ElementType: types.StringType, Optional: true, MarkdownDescription: what +
			" Keys are " + quoted(environment.ContainerResources) + " or `hugepages-<size>`; values are quantities such as `500m` or `256Mi`."}
	}
	timeoutsBlock := timeouts.Block(ctx, timeouts.Opts{
		Create: true, Update: true, Delete: true,
		CreateDescription: fmt.Sprintf("How long creating the namespace and its objects may take, e.g. `2m`. Default `%s`.", durationText(defaultEnvironmentCreateTimeout)),
		UpdateDescription: fmt.Sprintf("How long updating the objects may take. Default `%s`.", durationText(defaultEnvironmentUpdateTimeout)),
		DeleteDescription: fmt.Sprintf("How long destroy waits for the namespace to be really gone, e.g. `10m` for namespaces with slow finalizers. "+
			"Default `%s`. It is read from the state, so a changed value takes effect once it has been applied.", durationText(defaultEnvironmentDeleteTimeout)),
	})
	if block, ok := timeoutsBlock.(schema.SingleNestedBlock); ok {
		block.MarkdownDescription = "Timeouts of create, update and delete."
		timeoutsBlock = block
	}

	resp.Schema = schema.Schema{
		MarkdownDescription: "A GitLab environment's namespace and its companion objects. `terraform apply` creates the namespace, " +
			"`terraform destroy` (in the environment's `on_stop` job) deletes it and waits until it is really gone, and a restarted environment gets it back.\n\n" +
			"The plan shows every object of the environment in `manifests`, as complete YAML, so a change shows as exactly the lines it changes. " +
			"Objects are applied with server-side apply as the field manager `gitlabk8s`; a refresh compares the fields that field manager set with " +
			"the cluster, so changes made outside Terraform show in the next plan and the next apply restores them, while fields set by others " +
			"(the API server's defaults, controllers) never show.\n\n" +
			"The provider never deletes or takes over a namespace it did not create for this environment: it marks its namespaces with the label " +
			"`" + gitlab.LabelManagedBy + "=" + gitlab.ManagedByValue + "` and the annotation `" + gitlab.AnnotationEnvironment + "`. " +
			"Existing namespaces are adopted with `terraform import`. " + quoted(gitlab.ProtectedNamespaces) + " can never be used.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The namespace name.",
			},
			"name": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The GitLab environment name, e.g. `review/feature-x`, usually `$CI_ENVIRONMENT_NAME`: " + gitlab.EnvironmentNameRules + ". " +
					"With the default `namespace`, which is derived from it, changing it replaces the environment: the old namespace and everything in it " +
					"(releases, volumes) are deleted and a new one is created. With `namespace` set, the environment is renamed in place.",
				Validators: []validator.String{environmentNameValidator{}},
			},
			"slug": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "The environment's slug, known at plan time: the job's `CI_ENVIRONMENT_SLUG` when `name` is the job's `CI_ENVIRONMENT_NAME`, " +
					"otherwise the slug GitLab generates (lowercase `a-z`, `0-9` and `-`, starting with a letter, at most 24 characters, with a 6-character suffix when shortened or changed).",
			},
			"namespace": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "The namespace, known at plan time. Default: `<project path slug>-<project id>-<slug>`, the namespace GitLab's Kubernetes integration " +
					"historically gave an environment (parts missing outside CI are left out), shortened to 63 characters with a hash suffix when longer. " +
					"Set it explicitly to choose another: " + gitlab.NamespaceRules + ". Changing it replaces the environment.",
			},
			"uid": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The namespace's UID.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"labels": schema.MapAttribute{
				ElementType: types.StringType,
				Optional:    true,
				MarkdownDescription: "Labels of the namespace, e.g. for Pod Security Admission (`pod-security.kubernetes.io/enforce`). The provider adds " +
					quoted(environment.ProviderLabels[:2]) + ", which cannot be set here.",
			},
			"annotations": schema.MapAttribute{
				ElementType: types.StringType,
				Optional:    true,
				MarkdownDescription: "Annotations of the namespace. The provider adds " + quoted(environment.ProviderAnnotations[:3]) + " to every object, and records the pipeline in " +
					quoted(gitlab.VolatileAnnotations) + " on every apply; those records never cause a plan on their own and are not shown in `manifests`.",
			},
			"service_account": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: "The deploy ServiceAccount, with a Role and a RoleBinding of the same name in the namespace. It has no rights outside the namespace. " +
					"Created by default.",
				Attributes: map[string]schema.Attribute{
					"enabled": schema.BoolAttribute{Optional: true, MarkdownDescription: "Whether to create the ServiceAccount, Role and RoleBinding. Default `true`."},
					"name": schema.StringAttribute{Optional: true, MarkdownDescription: fmt.Sprintf(
						"Name of the ServiceAccount, Role and RoleBinding. Default `%s`.", environment.DefaultServiceAccountName)},
					"rules": schema.ListNestedAttribute{
						Optional: true,
						MarkdownDescription: "Rules of the Role. By default: all verbs except `escalate`, `bind` and `impersonate` on ConfigMaps, PersistentVolumeClaims, Pods, Secrets, " +
							"ServiceAccounts, Services, DaemonSets, Deployments, ReplicaSets, StatefulSets, CronJobs, Jobs, HorizontalPodAutoscalers, Ingresses and PodDisruptionBudgets, " +
							"and read access to Events and Pod logs; not Roles, RoleBindings, NetworkPolicies, ResourceQuotas or LimitRanges, so the deploy identity cannot widen its rights " +
							"or lift the environment's limits.",
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"api_groups":     ruleList("API groups; `\"\"` is the core group.", true),
							"resources":      ruleList("Resources, e.g. `deployments` or `pods/log`.", true),
							"verbs":          ruleList("Verbs: "+quoted(environment.KnownVerbs)+".", true),
							"resource_names": ruleList("Restricts the rule to objects of these names.", false),
						}},
					},
				},
			},
			"resource_quota": schema.MapAttribute{
				ElementType: types.StringType,
				Optional:    true,
				MarkdownDescription: fmt.Sprintf("Hard limits of a ResourceQuota named `%s`, by resource name, e.g. `{ \"requests.cpu\" = \"2\", \"limits.memory\" = \"4Gi\", pods = \"20\" }`. "+
					"No ResourceQuota when unset. Resource names: %s, and %s. Object counts must be whole numbers.",
					environment.ResourceQuotaName, quoted(environment.StandardQuotaResources), strings.Join(environment.QuotaResourcePatterns, ", ")),
			},
			"limit_range": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: fmt.Sprintf("A LimitRange named `%s` with defaults and bounds for every container. No LimitRange when unset. "+
					"As in Kubernetes, a missing `default` is taken from `max`, and a missing `default_request` from `default`, else `min`; "+
					"values must satisfy min <= default request <= default <= max.", environment.LimitRangeName),
				Attributes: map[string]schema.Attribute{
					"default":                 quantityMap("Default limits of containers that set none."),
					"default_request":         quantityMap("Default requests of containers that set none."),
					"max":                     quantityMap("Largest limits a container may set."),
					"min":                     quantityMap("Smallest requests a container may set."),
					"max_limit_request_ratio": quantityMap("Largest ratio of limit to request."),
				},
			},
			"network_policy": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: fmt.Sprintf("A NetworkPolicy named `%s` that admits traffic to the namespace's pods only from pods in the same namespace and in "+
					"`allow_from_namespaces`. Outgoing traffic is not restricted. Created by default.", environment.NetworkPolicyName),
				Attributes: map[string]schema.Attribute{
					"enabled": schema.BoolAttribute{Optional: true, MarkdownDescription: "Whether to create the NetworkPolicy. Default `true`."},
					"allow_from_namespaces": schema.SetAttribute{
						ElementType:         types.StringType,
						Optional:            true,
						MarkdownDescription: "Other namespaces whose pods may connect, e.g. the ingress controller's namespace `ingress-nginx` or a monitoring namespace.",
					},
				},
			},
			"ci_job_access": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: fmt.Sprintf("Bind the environment's own GitLab CI jobs in its namespace: a RoleBinding `%s`, applied right after the namespace, grants "+
					"`subjects` the ClusterRole `cluster_role` there and nowhere else. With the GitLab agent's `ci_access` impersonating each job "+
					"(`access_as: {ci_job: {}}`), a later job of this environment may then deploy to this namespace and a job of another environment may not. "+
					"The namespace also gets the label `%s`, by which the documented cluster setup recognises it; see the guide "+
					"\"Least-privilege CI jobs per environment\" for the one-time cluster setup this needs. No RoleBinding when unset.",
					environment.CIJobRoleBindingName, gitlab.LabelProjectID),
				Attributes: map[string]schema.Attribute{
					"cluster_role": schema.StringAttribute{Optional: true, MarkdownDescription: fmt.Sprintf(
						"The ClusterRole granted in the namespace. Default `%s`, the one the documented cluster setup defines. Creating the RoleBinding "+
							"takes the `bind` verb on it, or holding every right it grants (Kubernetes' RBAC escalation rules).", environment.DefaultCIJobClusterRole)},
					"subjects": schema.ListNestedAttribute{
						Optional: true,
						MarkdownDescription: "Who is bound. Default: the group `gitlab:project_env:<project id>:<slug>`, in which the GitLab agent puts every CI job of " +
							"this environment (the project ID comes from `CI_PROJECT_ID` or the provider's `gitlab` block).",
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"kind":      schema.StringAttribute{Required: true, MarkdownDescription: "Kind of the subject: " + quoted(environment.SubjectKinds) + "."},
							"name":      schema.StringAttribute{Required: true, MarkdownDescription: "Name of the group, user or ServiceAccount, e.g. `gitlab:project_env_tier:42:production`."},
							"namespace": schema.StringAttribute{Optional: true, MarkdownDescription: "Namespace of a ServiceAccount; default the environment's namespace."},
						}},
					},
				},
			},
			"retain_on_destroy": schema.BoolAttribute{
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
				MarkdownDescription: "Keep the namespace and its contents on destroy; only the Terraform state is removed. Default `false`.",
			},
			"manifests": schema.MapAttribute{
				ElementType: types.StringType,
				Computed:    true,
				MarkdownDescription: "Every object of the environment as complete YAML with sorted keys, by `<Kind>[.<group>]/<name>` (e.g. `Namespace/review-x`, " +
					"`ResourceQuota/" + environment.ResourceQuotaName + "`, `Role.rbac.authorization.k8s.io/deploy`). Known at plan time, so the plan shows which object changes and which lines. " +
					"After a refresh it holds what the cluster has in the fields the provider manages.",
			},
		},
		Blocks: map[string]schema.Block{"timeouts": timeoutsBlock},
	}
}

// durationText prints whole minutes as "5m" rather than Go's "5m0s".
func durationText(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// environmentNameValidator checks GitLab's environment name rules at validate time.
type environmentNameValidator struct{}

var _ validator.String = environmentNameValidator{}

func (environmentNameValidator) Description(context.Context) string {
	return "a GitLab environment name: " + gitlab.EnvironmentNameRules
}

func (v environmentNameValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (environmentNameValidator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for _, p := range environment.ValidateName(req.ConfigValue.ValueString()) {
		tflog.Debug(ctx, "invalid environment name", map[string]any{"problem": p.Detail})
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Environment Name", p.Detail)
	}
}
