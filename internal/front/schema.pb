
À'»'Ÿ
api_versions["list","string"]±Extra API versions for `.Capabilities.APIVersions` when rendering charts offline, e.g. `monitoring.coreos.com/v1`. `GITLABK8S_API_VERSIONS` (comma-separated) is used when unset.(@¥
client_certificate"string"èPEM-encoded client certificate, used with `host` and `client_key`. When unset, the `GITLABK8S_CLIENT_CERTIFICATE` environment variable is used.(@ì

client_key"string"uPEM-encoded private key of `client_certificate`. When unset, the `GITLABK8S_CLIENT_KEY` environment variable is used.(8@“
cluster_ca_certificate"string"©PEM-encoded CA certificate that verifies the API server's certificate, used with `host`. When unset, the `GITLABK8S_CLUSTER_CA_CERTIFICATE` environment variable is used.(@„
config_context"string"¬Kubeconfig context to use; by default the kubeconfig's current context. In a GitLab CI job that uses the GitLab agent for Kubernetes, contexts are named `<agent configuration project path>:<agent name>`, for example `my-group/cluster-config:review`. When unset, the `GITLABK8S_CONFIG_CONTEXT` environment variable is used.(@⁄
config_path"string"ºPath of a kubeconfig file. When unset, `$KUBECONFIG` (a colon-separated list of files) is used, then `~/.kube/config`. When unset, the `GITLABK8S_CONFIG_PATH` environment variable is used.(@è
execmA credential plugin that prints an ExecCredential, used with `host` (as `users[].user.exec` of a kubeconfig).(@Rì
g
api_version"string"JAPI version of the ExecCredential, e.g. `client.authentication.k8s.io/v1`. @
8
args["list","string"]Arguments of the command.(@
(
command"string"Command to run. @
B
env["map","string"]%Environment variables of the command.(@Â
gitlabæGitLab CI metadata used for namespace names, labels and annotations. Each value defaults to the matching predefined variable of the CI job, so inside GitLab CI this block is usually omitted.(@Rï
ê

commit_sha"string"tCommit SHA, recorded on apply in an annotation; never causes a diff. Defaults to the job's `CI_COMMIT_SHA` variable.(@
∏
environment_name"string"ïName of the job's environment; an environment of that name uses `environment_slug` as its slug. Defaults to the job's `CI_ENVIRONMENT_NAME` variable.(@

environment_slug"string"]GitLab's slug of the job's environment. Defaults to the job's `CI_ENVIRONMENT_SLUG` variable.(@
á
job_url"string"nJob URL, recorded on apply in an annotation; never causes a diff. Defaults to the job's `CI_JOB_URL` variable.(@
¶
merge_request_iid"string"ÇMerge request IID, recorded on apply in an annotation; never causes a diff. Defaults to the job's `CI_MERGE_REQUEST_IID` variable.(@
ñ
pipeline_url"string"xPipeline URL, recorded on apply in an annotation; never causes a diff. Defaults to the job's `CI_PIPELINE_URL` variable.(@


project_id"string"cGitLab project ID, part of default namespace names. Defaults to the job's `CI_PROJECT_ID` variable.(@
Ω
project_path_slug"string"ôSlug of the project path, part of default namespace names and the `app.gitlab.com/app` annotation. Defaults to the job's `CI_PROJECT_PATH_SLUG` variable.(@
¥

user_login"string"óLogin of the user the pipeline runs for, recorded with every release revision; never causes a diff. Defaults to the job's `GITLAB_USER_LOGIN` variable.(@ø
host"string"®Address of the Kubernetes API server, e.g. `https://k8s.example.com:6443`. When set, the kubeconfig is not read and `token`, `cluster_ca_certificate`, `client_certificate`, `client_key`, `insecure` and `exec` describe the connection. When unset, the `GITLABK8S_HOST` environment variable is used.(@Ω
insecure"bool"§Skip verification of the API server's certificate, used with `host`. Only for throwaway clusters. When unset, the `GITLABK8S_INSECURE` environment variable is used.(@„
kube_version"string"ƒKubernetes version used for `.Capabilities.KubeVersion` when rendering charts, e.g. `1.37.2`. When unset, the cluster's version is used when the cluster is reachable. Pin it to plan releases in a merge-request pipeline that has no cluster credentials. A plan with neither renders with `v1.20.0`, Helm 3's default, whichever Helm and Kubernetes libraries the provider is built with. When unset, the `GITLABK8S_KUBE_VERSION` environment variable is used.(@w
token"string"^Bearer token used with `host`. When unset, the `GITLABK8S_TOKEN` environment variable is used.(8@"ßManages GitLab environments on Kubernetes: one namespace per environment, created on apply and deleted on destroy, and Helm releases whose plans show the complete rendered manifests with exact, secret-safe diffs.

The cluster is found, in this order: an explicit `host`; else the kubeconfig file in `config_path`; else the files listed in `$KUBECONFIG`, merged the way kubectl merges them; else `~/.kube/config`; else the in-cluster service account. The provider connects only when a resource needs the cluster, so values unknown until apply are fine.(˜K
gitlabk8s_environment›K⁄Kö
annotations["map","string"]ÙAnnotations of the namespace. The provider adds `gitlabk8s.io/environment`, `app.gitlab.com/env`, `app.gitlab.com/app` to every object, and records the pipeline in `gitlabk8s.io/pipeline-url`, `gitlabk8s.io/job-url`, `gitlabk8s.io/commit-sha`, `gitlabk8s.io/merge-request-iid` on every apply; those records never cause a plan on their own and are not shown in `manifests`.(@≈
ci_job_access˝Bind the environment's own GitLab CI jobs in its namespace: a RoleBinding `gitlabk8s-ci-job`, applied right after the namespace, grants `subjects` the ClusterRole `cluster_role` there and nowhere else. With the GitLab agent's `ci_access` impersonating each job (`access_as: {ci_job: {}}`), a later job of this environment may then deploy to this namespace and a job of another environment may not. The namespace also gets the label `gitlabk8s.io/project-id`, by which the documented cluster setup recognises it; see the guide "Least-privilege CI jobs per environment" for the one-time cluster setup this needs. No RoleBinding when unset.(@RØ
ö
cluster_role"string"˚The ClusterRole granted in the namespace. Default `gitlabk8s:environment-ci-job`, the one the documented cluster setup defines. Creating the RoleBinding takes the `bind` verb on it, or holding every right it grants (Kubernetes' RBAC escalation rules).(@
ç
subjectsÿWho is bound. Default: the group `gitlab:project_env:<project id>:<slug>`, in which the GitLab agent puts every CI job of this environment (the project ID comes from `CI_PROJECT_ID` or the provider's `gitlab` block).(@R°
M
kind"string"7Kind of the subject: `Group`, `User`, `ServiceAccount`. @
n
name"string"XName of the group, user or ServiceAccount, e.g. `gitlab:project_env_tier:42:production`. @
^
	namespace"string"CNamespace of a ServiceAccount; default the environment's namespace.(@'
id"string"The namespace name.0@Ó
labels["map","string"]ÕLabels of the namespace, e.g. for Pod Security Admission (`pod-security.kubernetes.io/enforce`). The provider adds `app.kubernetes.io/managed-by`, `gitlabk8s.io/environment-slug`, which cannot be set here.(@ö

limit_rangeßA LimitRange named `gitlabk8s-environment` with defaults and bounds for every container. No LimitRange when unset. As in Kubernetes, a missing `default` is taken from `max`, and a missing `default_request` from `default`, else `min`; values must satisfy min <= default request <= default <= max.(@R‹
√
default["map","string"]°Default limits of containers that set none. Keys are `cpu`, `memory`, `ephemeral-storage` or `hugepages-<size>`; values are quantities such as `500m` or `256Mi`.(@
Õ
default_request["map","string"]£Default requests of containers that set none. Keys are `cpu`, `memory`, `ephemeral-storage` or `hugepages-<size>`; values are quantities such as `500m` or `256Mi`.(@
∑
max["map","string"]ôLargest limits a container may set. Keys are `cpu`, `memory`, `ephemeral-storage` or `hugepages-<size>`; values are quantities such as `500m` or `256Mi`.(@
 
max_limit_request_ratio["map","string"]òLargest ratio of limit to request. Keys are `cpu`, `memory`, `ephemeral-storage` or `hugepages-<size>`; values are quantities such as `500m` or `256Mi`.(@
∫
min["map","string"]úSmallest requests a container may set. Keys are `cpu`, `memory`, `ephemeral-storage` or `hugepages-<size>`; values are quantities such as `500m` or `256Mi`.(@é
	manifests["map","string"]ÍEvery object of the environment as complete YAML with sorted keys, by `<Kind>[.<group>]/<name>` (e.g. `Namespace/review-x`, `ResourceQuota/gitlabk8s-environment`, `Role.rbac.authorization.k8s.io/deploy`). Known at plan time, so the plan shows which object changes and which lines. After a refresh it holds what the cluster has in the fields the provider manages.0@ﬂ
name"string"»The GitLab environment name, e.g. `review/feature-x`, usually `$CI_ENVIRONMENT_NAME`: at most 255 characters: letters, digits, spaces, and '-', '_', '/', '$', '{', '}', '.', not starting or ending with '/'. With the default `namespace`, which is derived from it, changing it replaces the environment: the old namespace and everything in it (releases, volumes) are deleted and a new one is created. With `namespace` set, the environment is renamed in place. @‡
	namespace"string"¬The namespace, known at plan time. Default: `<project path slug>-<project id>-<slug>`, the namespace GitLab's Kubernetes integration historically gave an environment (parts missing outside CI are left out), shortened to 63 characters with a hash suffix when longer. Set it explicitly to choose another: at most 63 characters: lowercase letters a-z, digits 0-9 and '-', starting and ending with a letter or digit. Changing it replaces the environment.(0@Í
network_policy‘A NetworkPolicy named `gitlabk8s-isolation` that admits traffic to the namespace's pods only from pods in the same namespace and in `allow_from_namespaces`. Outgoing traffic is not restricted. Created by default.(@R¸
™
allow_from_namespaces["set","string"]{Other namespaces whose pods may connect, e.g. the ingress controller's namespace `ingress-nginx` or a monitoring namespace.(@
K
enabled"bool"4Whether to create the NetworkPolicy. Default `true`.(@Ú
resource_quota["map","string"]…Hard limits of a ResourceQuota named `gitlabk8s-environment`, by resource name, e.g. `{ "requests.cpu" = "2", "limits.memory" = "4Gi", pods = "20" }`. No ResourceQuota when unset. Resource names: `requests.cpu`, `requests.memory`, `requests.ephemeral-storage`, `requests.storage`, `limits.cpu`, `limits.memory`, `limits.ephemeral-storage`, `cpu`, `memory`, `ephemeral-storage`, `pods`, `services`, `services.loadbalancers`, `services.nodeports`, `configmaps`, `secrets`, `persistentvolumeclaims`, `replicationcontrollers`, `resourcequotas`, and count/<resource> (core group, e.g. count/configmaps), count/<resource>.<group> (e.g. count/deployments.apps), <storage class>.storageclass.storage.k8s.io/requests.storage, <storage class>.storageclass.storage.k8s.io/persistentvolumeclaims, hugepages-<size> and requests.hugepages-<size> (e.g. requests.hugepages-2Mi), requests.<domain>/<extended resource> (e.g. requests.nvidia.com/gpu). Object counts must be whole numbers.(@à
retain_on_destroy"bool"eKeep the namespace and its contents on destroy; only the Terraform state is removed. Default `false`.(0@í

service_accountóThe deploy ServiceAccount, with a Role and a RoleBinding of the same name in the namespace. It has no rights outside the namespace. Created by default.(@R‡
b
enabled"bool"KWhether to create the ServiceAccount, Role and RoleBinding. Default `true`.(@
Y
name"string"CName of the ServiceAccount, Role and RoleBinding. Default `deploy`.(@
ú
rulesÈRules of the Role. By default: all verbs except `escalate`, `bind` and `impersonate` on ConfigMaps, PersistentVolumeClaims, Pods, Secrets, ServiceAccounts, Services, DaemonSets, Deployments, ReplicaSets, StatefulSets, CronJobs, Jobs, HorizontalPodAutoscalers, Ingresses and PodDisruptionBudgets, and read access to Events and Pod logs; not Roles, RoleBindings, NetworkPolicies, ResourceQuotas or LimitRanges, so the deploy identity cannot widen its rights or lift the environment's limits.(@R¢
H

api_groups["list","string"]#API groups; `""` is the core group. @
V
resource_names["list","string"]-Restricts the rule to objects of these names.(@
P
	resources["list","string"],Resources, e.g. `deployments` or `pods/log`. @
©
verbs["list","string"]àVerbs: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`, `escalate`, `bind`, `impersonate`, `use`, `*`. @º
slug"string"•The environment's slug, known at plan time: the job's `CI_ENVIRONMENT_SLUG` when `name` is the job's `CI_ENVIRONMENT_NAME`, otherwise the slug GitLab generates (lowercase `a-z`, `0-9` and `-`, starting with a letter, at most 24 characters, with a 6-character suffix when shortened or changed).0@)
uid"string"The namespace's UID.0@ÿ
timeouts…h
create"string"RHow long creating the namespace and its objects may take, e.g. `2m`. Default `5m`.(Â
delete"string"ŒHow long destroy waits for the namespace to be really gone, e.g. `10m` for namespaces with slow finalizers. Default `5m`. It is read from the state, so a changed value takes effect once it has been applied.(K
update"string"5How long updating the objects may take. Default `5m`.("&Timeouts of create, update and delete.("úA GitLab environment's namespace and its companion objects. `terraform apply` creates the namespace, `terraform destroy` (in the environment's `on_stop` job) deletes it and waits until it is really gone, and a restarted environment gets it back.

The plan shows every object of the environment in `manifests`, as complete YAML, so a change shows as exactly the lines it changes. Objects are applied with server-side apply as the field manager `gitlabk8s`; a refresh compares the fields that field manager set with the cluster, so changes made outside Terraform show in the next plan and the next apply restores them, while fields set by others (the API server's defaults, controllers) never show.

The provider never deletes or takes over a namespace it did not create for this environment: it marks its namespaces with the label `app.kubernetes.io/managed-by=gitlabk8s` and the annotation `gitlabk8s.io/environment`. Existing namespaces are adopted with `terraform import`. `default`, `kube-system`, `kube-public`, `kube-node-lease` can never be used.(À¶
gitlabk8s_release¥¶∞¶6
app_version"string"The chart's `appVersion`.0@º
atomic"bool"£Undo a failed apply: a failed upgrade is rolled back to the last successful revision, a failed first install is uninstalled, and the error says so. Default `true`.(0@å
blocked_timeout"string"ÍHow long an object may stay blocked, during the wait, for a reason that might still clear by itself before the apply fails with that reason, as a Go duration (`30s`): a pod the scheduler cannot place (`Unschedulable`: resources, node selectors, taints, affinity), a volume its provisioner fails to create (`ProvisioningFailed`), a pod whose controller cannot create it for a reason that may pass (a quota that terminating pods will free, a webhook that did not answer), a container failing its readiness probe (`Unhealthy`), a `LoadBalancer` Service without an address. Unset (the default), they are waited for until `timeout`, whose error then names them and this attribute; set it on clusters without an autoscaler, where such a pod never fits.(@´
cascade"string"èHow destroy deletes what the release's objects own, as `helm uninstall --cascade` does. `background` (the default, as in Helm and kubectl): destroy deletes the release's objects and waits until they are gone; the garbage collector then removes what they owned (a Deployment's ReplicaSets and pods) in the background. `foreground`: each object is gone only after what it owns is gone, so destroy returns once the pods have terminated. `orphan`: what the objects owned is left running. Changing it changes nothing in the cluster.(0@Ô
chart"string"◊The chart: a local chart directory (`./charts/web`), a packaged chart (`./web-1.2.3.tgz`), a chart name in the HTTP(S) repository given by `repository`, or an OCI reference (`oci://registry.example.com/charts/web`). @¡
chart_digest"string"¢`sha256:<hex>` of the chart package (remote charts and `.tgz` files) or of the chart's files (directories). A chart republished under the same version changes it.0@O
chart_version"string"0The exact version of the chart that is rendered.0@ÿ

crd_policy"string"πWhat the apply does with the CustomResourceDefinitions in the chart's `crds/` directories, one of `create`, `create_replace`. `create` (the default) is Helm's rule: they are created when the release is installed and never changed afterwards (the plan of an upgrade that changes or adds one warns that it is left as it is). `create_replace` applies them, server-side, before every install and upgrade, so a chart's new version of a definition reaches the cluster; the plan shows the change in `manifests`, and refuses a definition that drops a version the cluster still records in `status.storedVersions`. Definitions in the chart's templates are applied by Helm as any object, whatever the policy.(0@â
crds["list","string"]ÈThe CustomResourceDefinitions the release installs, from the chart's `crds/` directories and its templates: their manifests as `manifests` shows them (values hidden there are hidden here), in the order of their keys, known at plan time with `manifests`. Empty when the chart has none. Pass them to the releases that create objects of their kinds as `crds_from`.0@‹
	crds_from["list","string"]∑CustomResourceDefinitions (YAML, one per element) that other releases install and this release's objects rely on, usually `gitlabk8s_release.<operator>.crds`, which also orders the two releases. The plan checks custom resources of their kinds against their schemas, also where the cluster does not serve the kinds yet (named in one warning) or the namespace does not exist yet, and `.Capabilities.APIVersions` lists the versions they serve. The apply waits until each is established before it installs or upgrades the release. While it is unknown, so are `manifests`.(@≈
dependency_update"bool"°For a chart directory, fetch the dependencies its `Chart.yaml` lists into its `charts/` directory before rendering, as `helm dependency build` does: the versions `Chart.lock` records when there is one (a `Chart.lock` out of step with `Chart.yaml` is an error), else the newest versions the constraints allow, writing `Chart.lock`. `file://`, HTTP(S) repository and `oci://` dependencies are fetched; nothing is fetched when `charts/` already holds them. Without it, a dependency missing from `charts/` fails the plan, naming it. Default `false`.(0@…
description"string"´Description recorded with the revision, shown by `helm history`. Default, in a GitLab CI job: who applied it (`GITLAB_USER_LOGIN`), from which pipeline, job, commit and merge request. Whether or not it is set, every revision also carries the release labels `gitlabk8s.io/pipeline-id`, `gitlabk8s.io/job-id`, `gitlabk8s.io/commit-sha`, `gitlabk8s.io/merge-request-iid`, `gitlabk8s.io/user` (pipeline and job IDs, commit SHA, merge request IID, user login, as valid label values), so `helm list --selector gitlabk8s.io/user=<login>` finds a user's releases.(@ƒ
force_replace"bool"§Replace the objects whose change the API server refuses because a field cannot change once set (a Deployment's selector, a Job's template, a StatefulSet's `volumeClaimTemplates`, a Service's `clusterIP`): the apply deletes each such object and Helm creates it again, as `kubectl replace --force` does. The plan names them in a warning. Without it (the default), the plan fails on such a change. Replacing an object interrupts what it runs. A StatefulSet's PersistentVolumeClaims outlive it (unless its `persistentVolumeClaimRetentionPolicy` says otherwise): the claims that exist keep their size, and a changed `volumeClaimTemplates` shapes only the claims created afterwards.(0@L
id"string"8`<namespace>/<name>`, the form `terraform import` takes.0@Æ
ignore_differencesä	Fields of the release's objects whose live value is not drift, as Argo CD's `ignoreDifferences`: a refresh records the chart's value for them, so a change made there by someone else never shows in a plan. Without it, any change to a field the chart sets shows, whoever made it, with four exceptions: maps the chart leaves empty (`annotations: {}`), fields whose manager is one of the built-in controllers (`kube-controller-manager`, `kube-scheduler`), `spec.replicas` of an object that a HorizontalPodAutoscaler of the release scales, and a `caBundle` the chart leaves empty (`""` or null) in a webhook configuration, a CustomResourceDefinition's conversion webhook or an APIService, which a controller writes at run time (Vault's agent injector, cert-manager's CA injector). A change of this setting takes effect in the plan it appears in: a difference it ignores does not make that plan upgrade the release. An upgrade leaves these fields, and the four exceptions, as they are live where they differ from the chart's value, unless the configuration changes the chart's value there since the previous revision: the plan shows that change, and the apply sets it.(@RÜ
™
json_pointers["list","string"]ÅFields to ignore, as JSON pointers (RFC 6901) into the object: `/spec/replicas`, `/spec/template/spec/containers/0/image`, `/metadata/annotations/example.com~1owner` (`/` in a key is written `~1`, `~` is written `~0`). A pointer ignores everything under it.(@
j
kind"string"TThe kind of the objects the rule applies to (`Deployment`); every kind when not set.(@
Ä
managers["list","string"]‹Field managers whose fields are ignored, by their exact names in `metadata.managedFields` (see them with `kubectl get <kind> <name> -o yaml --show-managed-fields`): a field one of them wrote last keeps the chart's value.(@
f
name"string"PThe name of the object the rule applies to; every object of `kind` when not set.(@∑
insecure_skip_tls_verify"bool"åAccept any certificate from the repository, like `helm --insecure-skip-tls-verify`: the connection is still encrypted, but anyone on the path can pose as the repository and serve another chart. Prefer `repository_ca_file`. It applies to the HTTPS chart repository or OCI registry of `chart`, and to the repositories and registries of the dependencies `dependency_update` fetches. Default `false`.(0@“
	manifests["map","string"]ÆEvery object of the release, rendered at plan time: one normalized YAML manifest per object (keys sorted, nothing the server sets), keyed `<Kind>[.<group>]/[<namespace>/]<name>` (the namespace only when it is not the release's), e.g. `Deployment.apps/web`, `ConfigMap/web-config`. CRDs from the chart's `crds/` and hooks are included; hooks keep their `helm.sh/hook` annotations; test hooks, which only `helm test` runs, are not. An object holding a value the chart generates for the first time (`randAlphaNum`, `uuidv4`, `genCA`) is unknown until the apply. Secret `data` and `stringData` values, `set_sensitive` values and what the chart derives from them read `(sensitive value hmac:<12 hex>)`, an HMAC keyed per release (see "Change markers"), or `(sensitive value)` in the first plan of a release. On refresh it holds the live values of the fields the chart sets, so a change made with kubectl or a deleted object shows in the next plan.0@Z
max_history"number";How many revisions Helm keeps; `0` keeps all. Default `10`.(0@Ω
name"string"¶Name of the Helm release: at most 53 characters, lowercase letters, digits, `-` and `.`, starting and ending with a letter or digit. Changing it replaces the release. @¶
	namespace"string"äNamespace of the release, usually `gitlabk8s_environment.<name>.namespace`. It must exist; the release does not create it. at most 63 characters: lowercase letters a-z, digits 0-9 and '-', starting and ending with a letter or digit. Changing it replaces the release. @°
patches°Patches to the objects the chart renders, hooks and test hooks included, for what the chart has no value for (a node selector, an annotation, a resource limit), as Flux's `postRenderers` with kustomize patches. Each patch applies, in order, to every object its `target` selects. The plan's `manifests` show the patched objects and the apply applies exactly them. A patch whose target selects no object fails the plan.(@RÌ
ë
patch"string"˘The patch, YAML or JSON: a strategic-merge patch (a partial object; lists of containers and the like are merged by their keys, and `apiVersion`, `kind` and `metadata.name` may be left out), or a JSON 6902 patch when it is a list of operations (`[{op: replace, path: /spec/replicas, value: 2}]`). A value a patch puts into a Secret is hidden in the plan like every Secret value. @
‘
targetÑThe objects the patch applies to: those that match every field set. At least one of `kind`, `name` and `label_selector` must be set. @Ræ
™
group"string"íThe API group (`apps`; empty for the core group). A regular expression matched against the whole field, as kustomize matches it; any when not set.(@
è
kind"string"yThe kind (`Deployment`). A regular expression matched against the whole field, as kustomize matches it; any when not set.(@
Ü
label_selector"string"fA Kubernetes label selector the object's labels must match (`app.kubernetes.io/name=web,tier!=cache`).(@
â
name"string"sThe object's name. A regular expression matched against the whole field, as kustomize matches it; any when not set.(@
—
	namespace"string"µThe object's namespace; an object the chart renders without one is in the release's. A regular expression matched against the whole field, as kustomize matches it; any when not set.(@
ë
version"string"xThe API version (`v1`). A regular expression matched against the whole field, as kustomize matches it; any when not set.(@ñ

plain_http"bool"˘Talk to OCI registries (the chart's, and those of the dependencies `dependency_update` fetches) over plain HTTP instead of HTTPS, like `helm --plain-http`. Default `false`: every registry, one on `localhost` too, is reached over HTTPS, and a registry that answers plain HTTP fails the plan with a message saying to set it. HTTP(S) chart repositories use their URL's scheme instead; `plain_http` cannot be combined with an `http(s)://` `repository`, nor, for a chart in a registry, with the TLS attributes.(0@™
plan_checks"string"äWhat the plan checks before it shows the release (see "What the plan checks"): `all` (the default) checks API versions against the target Kubernetes version and fields against the cluster's own schemas, and dry-runs the changed objects on the cluster, when it is reachable; `offline` asks the cluster nothing and checks fields against the schema the provider ships, for a plan identity that may only read; `none` checks nothing, for a chart the checks wrongly refuse (the apply still fails on what the API server refuses).(0@ç
recover_pending"bool"ÎRecover a release that a killed run (SIGKILL, a lost CI runner) left `pending-install`, `pending-upgrade` or `pending-rollback`, instead of failing with Helm's `another operation (install/upgrade/rollback) is in progress`. A pending install is uninstalled and installed again; a pending upgrade or rollback is marked failed, rolled back to the last deployed revision when there is one, and upgraded. Terraform's state lock guarantees no other run is operating on the release. Default `true`.(0@ƒ

repository"string"ßURL of the HTTP(S) chart repository that holds `chart`, or an `oci://` registry path `chart` is appended to. Leave unset for local charts and full `oci://` references.(@ƒ
repository_ca_file"string"üPath of a PEM file of one or more CA certificates to trust, in addition to the system's, for a repository whose certificate a private CA signed (`helm --ca-file`). In GitLab CI, a variable of type File gives such a path. It applies to the HTTPS chart repository or OCI registry of `chart`, and to the repositories and registries of the dependencies `dependency_update` fetches. The file is checked at validate time.(@ 
repository_cert_file"string"£Path of a PEM client certificate to present to a repository that requires one (`helm --cert-file`); set `repository_key_file` with it. It applies to the HTTPS chart repository or OCI registry of `chart`, and to the repositories and registries of the dependencies `dependency_update` fetches.(@¥
repository_key_file"string"éPath of the PEM private key of `repository_cert_file` (`helm --key-file`). The key is read only to connect; it never appears in plans or logs.(@Ö
repository_password"string"^Password or token for the chart repository or OCI registry. It never appears in plans or logs.(8@X
repository_username"string"3User name for the chart repository or OCI registry.(@W
revision"number"=The release's current revision, as `helm history` numbers it.0@ã
	run_tests"bool"ÔRun the chart's test hooks (`helm.sh/hook: test`) after every install or upgrade that succeeded, as `helm test` does, and fail the apply when one fails, naming its pod and why. With `atomic`, a failed test undoes the revision as a failed rollout does. Test hooks are deleted as their `helm.sh/hook-delete-policy` says and never appear in `manifests`. Default `false`.(0@¯
set["map","string"]⁄Values by Helm path, applied after `values`, like `helm --set`: `{"image.tag" = "1.2.3"}`. `true`/`false`, `null` and integers are typed as `--set` types them; the value is taken literally (commas and braces included).(@≈
set_sensitive["map","string"]õSensitive values by Helm path, applied last, always as strings (`helm --set-string`). Each value is replaced by a marker wherever it lands in a rendered object (a Secret, a ConfigMap, an environment variable, an annotation), in `manifests`, in diagnostics and in the provider's logs.(8@í
status"string"zHelm's status of the current revision: `deployed`, `failed`, `pending-install`, `pending-upgrade`, `pending-rollback`, ...0@û
take_ownership"bool"˝Take over what exists instead of failing on it, as `helm install --take-ownership` does. A release that exists in the cluster but not in the state (installed with `helm install`, or left by a lost state) is upgraded from its deployed revision, which the plan names in a warning with the difference from what is deployed. Objects that exist without Helm's ownership metadata (created with `kubectl apply`) are adopted, and so are objects kept by the uninstall of a release that no longer exists. Objects that belong to another Helm release are refused at plan time, naming it. Default `false`: such a release fails the plan, naming `terraform import`, and so does an object the apply would create that exists without the release's Helm ownership metadata, naming it.(0@©
timeout"string"çHow long each Helm operation (hooks, the wait, a rollback, the uninstall on destroy) may take, as a Go duration (`90s`, `10m`). Default `5m`.(0@à
urls["list","string"]ËThe URLs the release's Ingress and Gateway API HTTPRoute objects serve, `<scheme>://<host><path>`, known at plan time with `manifests`: in the order of their keys, then of their rules and paths. An Ingress host listed in its `tls` is `https`, any other `http`; an HTTPRoute is `https` unless its parent is a Gateway of the release whose listener speaks HTTP, or its parentRef names port 80. Rules without a host, wildcard hosts and hosts hidden as sensitive values have no URL. Empty when the release serves none. A review app's pipeline can pass the first one to GitLab as the environment's URL (`environment:url`).0@Ÿ
values["list","string"]∑Values as YAML documents, merged in order like `helm -f` files: maps merge key by key, anything else in a later document replaces the earlier value. Documents are compared by meaning, so key order, indentation and comments never change the rendered manifests. Invalid YAML is refused at plan time with its line.(@‡
values_sensitive["list","string"]≤Sensitive values as YAML documents, for instance `yamlencode` of sensitive variables: merged like `values`, after `values` and before `set` and `set_sensitive`, as later `helm -f` files are. Every string and number in them (not the keys) is a sensitive value: it never shows in `manifests`, diagnostics or logs, nor does what the chart derives from it. Invalid YAML is refused at plan time with its line, without quoting the document.(8@Ò
version"string"◊Chart version: an exact version, or a constraint (`~1.2.0`) that must resolve to exactly one version of a remote chart. Unset means the newest stable version of a remote chart; for a local chart it is checked when set. The resolved version is `chart_version`; the content digest `chart_digest` shows a chart republished under the same version.(@¿
wait"bool"©Wait until every object is ready, every Job complete and every `LoadBalancer` Service has an address (as `helm --wait` does). The wait fails within seconds, naming the object, Kubernetes' reason and its message, when nothing will change by waiting: a pod crash-loops, cannot pull its image or cannot be configured; a controller cannot create pods because a ResourceQuota, a LimitRange, Pod Security admission or an admission webhook refuses them; a PersistentVolumeClaim names a StorageClass that does not exist, or none where the cluster has no default; a Job (a hook too) fails, with its pod; a Deployment exceeds its progress deadline. What might still clear by itself (a pod no node can take yet, which a cluster autoscaler may fix; a provisioner that keeps failing; a readiness probe that fails; a load balancer without an address) is named in the progress and in the timeout's error, and fails the wait early with `blocked_timeout`. Progress (`ready x/y` per workload, and why an object waits) is logged at level INFO (`TF_LOG_PROVIDER=INFO`). Default `true`.(0@"ÅA Helm release whose plan shows exactly what will change.

The plan renders the chart with Helm's engine (no cluster writes; `lookup` reads only the release's namespace) and shows one manifest per object in `manifests`, so `terraform plan` lists the objects added, removed or changed and, for a changed object, only the changed lines. `.Capabilities` uses the provider's `kube_version` and `api_versions` when set, else the cluster's version and API versions, so a merge-request pipeline can plan without cluster credentials. Secret values and `set_sensitive` values never appear.

Apply installs or upgrades a real Helm release (`helm list`, `helm history` and `helm rollback` work on it); hooks run and CRDs in `crds/` are created as Helm creates them; test hooks are left to `helm test`. What is applied is what the plan showed: values a chart generates (`randAlphaNum`, `genCA`) are known after apply the first time and kept from what was applied afterwards, and when the chart renders anything else at apply than the plan showed, the apply fails before touching the cluster, naming the object. Cancelling Terraform (Ctrl-C, SIGTERM) stops the operation and records the release as failed rather than pending; `recover_pending` handles runs that were killed.

Destroy uninstalls the release and waits until its objects are gone; `cascade` says whether it also waits for what they own (a Deployment's pods).(¬
gitlabk8s_cluster¨©n
context"string"UKubeconfig context in use; empty with an explicit `host` or in-cluster configuration.0@0
host"string"Address of the API server.0@I
server_version"string")The API server's version, e.g. `v1.37.2`.0@P
username"string"6The user the API server authenticates the provider as.0@"fConnects to the cluster and tells which API server, kubeconfig context and identity the provider uses.(¿
gitlabk8s_namespacesß§å
gitlab_api_url"string"ÈURL of GitLab's REST API, ending with `/api/v4`, e.g. `https://gitlab.example.com/api/v4`. Defaults to the job's `CI_API_V4_URL`. Without it (and a token) GitLab is not asked: every `gitlab_state` is `unknown` and nothing is `stale`.(0@ı
gitlab_token"string"‘A GitLab access token (personal, project or group) with the `read_api` scope and at least the Reporter role, sent as `PRIVATE-TOKEN`. When unset, the `GITLABK8S_GITLAB_TOKEN` environment variable is used, else the job's `CI_JOB_TOKEN` (sent as `JOB-TOKEN`; GitLab 16.2 and later accept it for the environments API of the job's own project).(8@‹

namespaces"The project's namespaces, by name.0@R•
Y
age"string"DHow long the namespace has existed, as a duration such as `72h0m0s`.0@
L
age_seconds"number"/How long the namespace has existed, in seconds.0@
O

created_at"string"3When the namespace was created, in RFC 3339 format.0@
æ
environment_name"string"õThe environment's name, from the ownership marker or from GitLab; empty when neither tells it (a historical name whose environment GitLab no longer lists).0@
–
environment_slug"string"≠The environment's slug, from the ownership marker, the namespace's name or GitLab; empty only for a name shortened to 63 characters whose environment GitLab no longer lists.0@
÷
gitlab_state"string"∑What GitLab says of the environment: `available`, `stopping`, `stopped`, `gone`, `unknown`. `gone`: GitLab lists no such environment (it was deleted); `unknown`: GitLab was not asked.0@
‰
	import_id"string"»The ID that imports exactly this namespace into a `gitlabk8s_environment`: `<name>@<uid>`. The import refuses a namespace of that name with another UID (deleted and created again since it was listed).0@
+
name"string"The namespace's name.0@
T
owned"bool"?Whether the namespace carries this provider's ownership marker.0@
Ê
rule"string"œWhy the namespace is the project's: `marked`, `historical`. `marked`: it carries this provider's ownership marker; `historical`: it has no marker and the historical name of one of the project's environments.0@
Ô
stale"bool"ŸWhether the namespace is a leftover: its `gitlab_state` is one of `stopped`, `gone` and the namespace is not already terminating. Never true for an `available` or `stopping` environment, nor when GitLab was not asked.0@
J
terminating"bool"/Whether the namespace is already being deleted.0@
)
uid"string"The namespace's UID.0@è

project_id"string"qNumeric ID of the GitLab project. Defaults to the provider's `gitlab.project_id`, else the job's `CI_PROJECT_ID`.(0@‰
project_path_slug"string"æSlug of the project's path, as `CI_PROJECT_PATH_SLUG` (`my-group-my-app` for `my-group/my-app`). Defaults to the provider's `gitlab.project_path_slug`, else the job's `CI_PROJECT_PATH_SLUG`.(0@"¿The namespaces of a GitLab project's environments, and which of them are leftovers. A namespace is listed when it carries this provider's ownership marker (the label `app.kubernetes.io/managed-by=gitlabk8s` and the annotation `gitlabk8s.io/environment`) with the project's ID in the label `gitlabk8s.io/project-id` or, without that label, the project's path slug in `app.gitlab.com/app`, or when it has the name GitLab's certificate-based Kubernetes integration gave the project's environments, `<project path slug>-<project id>-<environment slug>` (shortened to 63 characters with a hash suffix when longer). Any other namespace is never listed.

When a GitLab API URL and token are known (inside GitLab CI, `$CI_API_V4_URL` and `$CI_JOB_TOKEN`), each namespace also says what GitLab's environments API reports for its environment, and `stale` marks those whose environment is stopped or gone: the leftovers a janitor pipeline adopts with `import` blocks and destroys (see the guide "Sweeping leftover namespaces"). Listing namespaces needs the cluster-wide right to `list` `namespaces`.(2