package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/environment"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
)

const envAddr = "gitlabk8s_environment.test"

// envTestNames gives a test its own environment name and namespace, so tests
// never share cluster objects.
func envTestNames(t *testing.T, role string) (name, namespace string) {
	sum := sha256.Sum256([]byte(t.Name() + "/" + role))
	suffix := hex.EncodeToString(sum[:])[:8]
	return "review/acc-" + suffix, "acc-env-" + role + "-" + suffix
}

// envTest gives a test its own environment name and namespace (envTestNames) and the admin
// client, and deletes the namespace when the test ends.
func envTest(t *testing.T, role string) (client kubernetes.Interface, name, namespace string) {
	t.Helper()
	client = adminClient(t)
	name, namespace = envTestNames(t, role)
	cleanupNamespace(t, client, namespace)
	return client, name, namespace
}

func adminClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	client, err := testAccCluster(t).Clientset("admin")
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// cleanupNamespace deletes the namespace when the test ends, first removing
// the test's own finalizer from everything inside, so no test leaves one behind.
func cleanupNamespace(t *testing.T, client kubernetes.Interface, namespace string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		if cms, err := client.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{}); err == nil {
			for _, cm := range cms.Items {
				if len(cm.Finalizers) > 0 {
					cm.Finalizers = nil
					_, _ = client.CoreV1().ConfigMaps(namespace).Update(ctx, &cm, metav1.UpdateOptions{})
				}
			}
		}
		err := client.CoreV1().Namespaces().Delete(ctx, namespace, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("clean up namespace %s: %v", namespace, err)
		}
	})
}

// namespaceGone fails unless the namespace no longer exists at all: destroy
// waits until it is gone, so there is no polling here.
func namespaceGone(client kubernetes.Interface, namespace string) error {
	ns, err := client.CoreV1().Namespaces().Get(context.Background(), namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("namespace %s still exists (phase %s)", namespace, ns.Status.Phase)
}

func waitNamespaceGone(t *testing.T, client kubernetes.Interface, namespace string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		return namespaceGone(client, namespace) == nil, nil
	})
	if err != nil {
		t.Fatalf("namespace %s was not deleted: %v", namespace, err)
	}
}

func getNamespace(t *testing.T, client kubernetes.Interface, namespace string) *corev1.Namespace {
	t.Helper()
	ns, err := client.CoreV1().Namespaces().Get(context.Background(), namespace, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get namespace %s: %v", namespace, err)
	}
	return ns
}

func configEnvironment(name, namespace string, pods int) string {
	return fmt.Sprintf(`
resource "gitlabk8s_environment" "test" {
  name      = %q
  namespace = %q
  labels    = { team = "payments" }
  resource_quota = {
    "requests.cpu" = "1"
    pods           = "%d"
  }
  limit_range = {
    default_request = { cpu = "100m" }
    max             = { cpu = "2", memory = "1Gi" }
  }
  network_policy = { allow_from_namespaces = ["ingress-nginx"] }
}
`, name, namespace, pods)
}

const quotaKey = "ResourceQuota/" + environment.ResourceQuotaName

func TestAccEnvironment_lifecycle(t *testing.T) {
	client := adminClient(t)
	name, _ := envTestNames(t, "life")
	slug := gitlab.EnvironmentSlug(name)
	namespace := gitlab.DefaultNamespace("group-app", "42", slug)
	cleanupNamespace(t, client, namespace)
	providerBlock := `
provider "gitlabk8s" {
  gitlab = {
    project_id        = "42"
    project_path_slug = "group-app"
    pipeline_url      = "https://gitlab.example/group/app/-/pipelines/1"
  }
}
`
	config := func(pods int) string {
		return providerBlock + fmt.Sprintf(`
resource "gitlabk8s_environment" "test" {
  name           = %q
  labels         = { team = "payments" }
  resource_quota = { "requests.cpu" = "1", pods = "%d" }
  limit_range    = { default_request = { cpu = "100m" }, max = { cpu = "2" } }
}
`, name, pods)
	}
	var firstUID string

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			return namespaceGone(client, namespace)
		},
		Steps: []resource.TestStep{
			{
				Config: config(10),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(envAddr, plancheck.ResourceActionCreate),
					// Known while planning, so a release in the same configuration can render.
					plancheck.ExpectKnownValue(envAddr, tfjsonpath.New("slug"), knownvalue.StringExact(slug)),
					plancheck.ExpectKnownValue(envAddr, tfjsonpath.New("namespace"), knownvalue.StringExact(namespace)),
					plancheck.ExpectKnownValue(envAddr, tfjsonpath.New("id"), knownvalue.StringExact(namespace)),
					plancheck.ExpectKnownValue(envAddr, tfjsonpath.New("manifests"), knownvalue.MapSizeExact(7)),
					plancheck.ExpectKnownValue(envAddr, tfjsonpath.New("manifests").AtMapKey(quotaKey), knownvalue.StringRegexp(regexp.MustCompile(`(?m)^    pods: "10"$`))),
					plancheck.ExpectUnknownValue(envAddr, tfjsonpath.New("uid")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(envAddr, tfjsonpath.New("uid"), knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f-]{36}$`))),
					statecheck.ExpectKnownValue(envAddr, tfjsonpath.New("retain_on_destroy"), knownvalue.Bool(false)),
				},
				Check: func(*terraform.State) error {
					ns := getNamespace(t, client, namespace)
					firstUID = string(ns.UID)
					if !gitlab.OwnedBy(ns.Annotations, ns.Labels, name) || ns.Labels["team"] != "payments" {
						return fmt.Errorf("namespace lacks the ownership marker or the user's label: labels %v annotations %v", ns.Labels, ns.Annotations)
					}
					if ns.Annotations[gitlab.AnnotationPipelineURL] != "https://gitlab.example/group/app/-/pipelines/1" || ns.Annotations[gitlab.AnnotationGitLabApp] != "group-app" {
						return fmt.Errorf("namespace lacks the pipeline record or GitLab's annotations: %v", ns.Annotations)
					}
					for _, sa := range []string{"deploy"} {
						if _, err := client.CoreV1().ServiceAccounts(namespace).Get(context.Background(), sa, metav1.GetOptions{}); err != nil {
							return err
						}
					}
					_, err := client.NetworkingV1().NetworkPolicies(namespace).Get(context.Background(), environment.NetworkPolicyName, metav1.GetOptions{})
					return err
				},
			},
			{
				// One quota value changes: only the ResourceQuota entry, by exactly that line.
				Config: config(20),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(envAddr, plancheck.ResourceActionUpdate),
					expectManifestChanges(envAddr, map[string]*manifestLines{
						quotaKey: {removed: []string{`pods: "10"`}, added: []string{`pods: "20"`}},
					}),
				}},
				Check: func(*terraform.State) error {
					q, err := client.CoreV1().ResourceQuotas(namespace).Get(context.Background(), environment.ResourceQuotaName, metav1.GetOptions{})
					if err != nil {
						return err
					}
					if got := q.Spec.Hard[corev1.ResourcePods]; got.String() != "20" || string(q.UID) == "" {
						return fmt.Errorf("quota pods = %s, want 20", got.String())
					}
					if ns := getNamespace(t, client, namespace); string(ns.UID) != firstUID {
						return fmt.Errorf("the namespace was replaced, not updated in place")
					}
					return nil
				},
			},
			{
				// Another pipeline: the record annotations change, the plan stays empty.
				Config:   strings.Replace(config(20), "pipelines/1", "pipelines/2", 1),
				PlanOnly: true,
			},
			{
				// The environment the provider created imports completely.
				ResourceName:                         envAddr,
				ImportState:                          true,
				ImportStateId:                        namespace,
				ImportStateVerify:                    true,
				ImportStateVerifyIdentifierAttribute: "id",
				ImportStateVerifyIgnore:              []string{"resource_quota", "limit_range", "timeouts"},
			},
			{
				// Removed from the configuration: destroyed, and gone when destroy returns.
				Config: providerBlock,
				Check: func(*terraform.State) error {
					return namespaceGone(client, namespace)
				},
			},
			{
				// A restarted environment gets its namespace back.
				Config: config(20),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(envAddr, plancheck.ResourceActionCreate),
				}},
				Check: func(*terraform.State) error {
					if ns := getNamespace(t, client, namespace); string(ns.UID) == firstUID {
						return fmt.Errorf("expected a new namespace, got the old UID")
					}
					return nil
				},
			},
		},
	})
}

func TestAccEnvironment_driftIsShownAndRepaired(t *testing.T) {
	client, name, namespace := envTest(t, "drift")
	ctx := context.Background()

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return namespaceGone(client, namespace) },
		Steps: []resource.TestStep{
			{Config: configEnvironment(name, namespace, 10)},
			{
				PreConfig: func() {
					// kubectl edit of the quota, kubectl label team- on the namespace,
					// kubectl delete of the RoleBinding; plus changes by others to
					// fields the provider does not manage, which must not show.
					q, err := client.CoreV1().ResourceQuotas(namespace).Get(ctx, environment.ResourceQuotaName, metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					q.Spec.Hard[corev1.ResourcePods] = apiresource.MustParse("20")
					q.Labels["example.com/audited"] = "yes"
					if _, err := client.CoreV1().ResourceQuotas(namespace).Update(ctx, q, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
						t.Fatal(err)
					}
					ns := getNamespace(t, client, namespace)
					delete(ns.Labels, "team")
					ns.Annotations["example.com/owner"] = "someone-else"
					if _, err := client.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{FieldManager: "kubectl-label"}); err != nil {
						t.Fatal(err)
					}
					if err := client.RbacV1().RoleBindings(namespace).Delete(ctx, environment.DefaultServiceAccountName, metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: configEnvironment(name, namespace, 10),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(envAddr, plancheck.ResourceActionUpdate),
					expectManifestChanges(envAddr, map[string]*manifestLines{
						quotaKey:                 {removed: []string{`pods: "20"`}, added: []string{`pods: "10"`}},
						"Namespace/" + namespace: {added: []string{"team: payments"}},
						"RoleBinding.rbac.authorization.k8s.io/" + environment.DefaultServiceAccountName: nil,
					}),
				}},
				Check: func(*terraform.State) error {
					q, err := client.CoreV1().ResourceQuotas(namespace).Get(ctx, environment.ResourceQuotaName, metav1.GetOptions{})
					if err != nil {
						return err
					}
					if got := q.Spec.Hard[corev1.ResourcePods]; got.String() != "10" {
						return fmt.Errorf("quota pods = %s after apply, want 10", got.String())
					}
					if q.Labels["example.com/audited"] != "yes" {
						return fmt.Errorf("apply removed another manager's label from the quota: %v", q.Labels)
					}
					ns := getNamespace(t, client, namespace)
					if ns.Labels["team"] != "payments" || ns.Annotations["example.com/owner"] != "someone-else" {
						return fmt.Errorf("namespace labels %v annotations %v: want team restored and the other annotation kept", ns.Labels, ns.Annotations)
					}
					_, err = client.RbacV1().RoleBindings(namespace).Get(ctx, environment.DefaultServiceAccountName, metav1.GetOptions{})
					return err
				},
			},
			{
				// A namespace deleted outside Terraform is created again.
				PreConfig: func() {
					if err := client.CoreV1().Namespaces().Delete(ctx, namespace, metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
					waitNamespaceGone(t, client, namespace)
				},
				Config: configEnvironment(name, namespace, 10),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(envAddr, plancheck.ResourceActionCreate),
				}},
				Check: func(*terraform.State) error {
					getNamespace(t, client, namespace)
					return nil
				},
			},
			{
				// Dropping companions from the configuration deletes them.
				Config: fmt.Sprintf(`
resource "gitlabk8s_environment" "test" {
  name            = %q
  namespace       = %q
  labels          = { team = "payments" }
  service_account = { enabled = false }
  network_policy  = { enabled = false }
}
`, name, namespace),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(envAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(envAddr, tfjsonpath.New("manifests"), knownvalue.MapSizeExact(1)),
				}},
				Check: func(*terraform.State) error {
					for what, err := range map[string]error{
						"ServiceAccount": getErr(client.CoreV1().ServiceAccounts(namespace).Get(ctx, environment.DefaultServiceAccountName, metav1.GetOptions{})),
						"Role":           getErr(client.RbacV1().Roles(namespace).Get(ctx, environment.DefaultServiceAccountName, metav1.GetOptions{})),
						"RoleBinding":    getErr(client.RbacV1().RoleBindings(namespace).Get(ctx, environment.DefaultServiceAccountName, metav1.GetOptions{})),
						"ResourceQuota":  getErr(client.CoreV1().ResourceQuotas(namespace).Get(ctx, environment.ResourceQuotaName, metav1.GetOptions{})),
						"LimitRange":     getErr(client.CoreV1().LimitRanges(namespace).Get(ctx, environment.LimitRangeName, metav1.GetOptions{})),
						"NetworkPolicy":  getErr(client.NetworkingV1().NetworkPolicies(namespace).Get(ctx, environment.NetworkPolicyName, metav1.GetOptions{})),
					} {
						if !apierrors.IsNotFound(err) {
							return fmt.Errorf("%s dropped from the configuration was not deleted: %v", what, err)
						}
					}
					return nil
				},
			},
		},
	})
}

func getErr[T any](_ T, err error) error { return err }

func TestAccEnvironment_importLeftoverNamespaceThenDestroy(t *testing.T) {
	client, name, namespace := envTest(t, "import")
	ctx := context.Background()
	config := fmt.Sprintf(`
resource "gitlabk8s_environment" "test" {
  name      = %q
  namespace = %q
}
`, name, namespace)

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return namespaceGone(client, namespace) },
		Steps: []resource.TestStep{
			{
				// A review app namespace left behind by an older pipeline.
				PreConfig: func() {
					if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
					if _, err := client.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "leftover"}}, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config:             config,
				ResourceName:       envAddr,
				ImportState:        true,
				ImportStateId:      namespace,
				ImportStatePersist: true,
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 || states[0].Attributes["namespace"] != namespace || states[0].Attributes["uid"] == "" {
						return fmt.Errorf("imported state: %v", states)
					}
					return nil
				},
			},
			{
				// Destroy right after the import deletes the adopted namespace.
				Config:  config,
				Destroy: true,
			},
		},
	})
}

func TestAccEnvironment_importThenApplyAdopts(t *testing.T) {
	client, name, namespace := envTest(t, "adopt")
	ctx := context.Background()
	config := fmt.Sprintf(`
resource "gitlabk8s_environment" "test" {
  name      = %q
  namespace = %q
}
`, name, namespace)

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return namespaceGone(client, namespace) },
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace, Labels: map[string]string{"legacy": "true"}}}, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config:             config,
				ResourceName:       envAddr,
				ImportState:        true,
				ImportStateId:      namespace,
				ImportStatePersist: true,
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(envAddr, plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					ns := getNamespace(t, client, namespace)
					if !gitlab.OwnedBy(ns.Annotations, ns.Labels, name) || ns.Labels["legacy"] != "true" {
						return fmt.Errorf("adopted namespace: labels %v annotations %v; want the marker written and the existing label kept", ns.Labels, ns.Annotations)
					}
					return nil
				},
			},
		},
	})
}

func TestAccEnvironment_refusesForeignNamespaces(t *testing.T) {
	client := adminClient(t)
	name, foreign := envTestNames(t, "foreign")
	_, otherEnvs := envTestNames(t, "other")
	cleanupNamespace(t, client, foreign)
	cleanupNamespace(t, client, otherEnvs)
	ctx := context.Background()
	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: foreign, Labels: map[string]string{"owner": "someone"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: otherEnvs, Labels: gitlab.OwnershipLabels("production"), Annotations: gitlab.OwnershipAnnotations("production", "production", "")}},
	} {
		if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	config := func(namespace string) string {
		return fmt.Sprintf(`
resource "gitlabk8s_environment" "test" {
  name      = %q
  namespace = %q
}
`, name, namespace)
	}

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      config(foreign),
				ExpectError: regexp.MustCompile(`(?s)Namespace Belongs to Someone Else.*` + foreign + `.*terraform import\s+gitlabk8s_environment.<resource name>\s+` + foreign),
			},
			{
				Config:      config(otherEnvs),
				ExpectError: regexp.MustCompile(`(?s)Namespace Belongs to Someone Else.*GitLab environment\s+"production"`),
			},
			{
				Config:      config("kube-system"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)kube-system.*can\s+never\s+create,\s+adopt\s+or\s+delete\s+it`),
			},
			{
				// Outside CI the default namespace of an environment named "default" is "default".
				Config:      `resource "gitlabk8s_environment" "test" { name = "default" }`,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)default\s+namespace\s+of\s+environment\s+"default"\s+is\s+"default"`),
			},
			{
				Config:        config(foreign),
				ResourceName:  envAddr,
				ImportState:   true,
				ImportStateId: "kube-public",
				ExpectError:   regexp.MustCompile(`(?s)Invalid Import ID.*kube-public.*can\s+never`),
			},
		},
	})

	// Nothing was taken over.
	for _, namespace := range []string{foreign, otherEnvs} {
		ns := getNamespace(t, client, namespace)
		if ns.DeletionTimestamp != nil || ns.Annotations[gitlab.AnnotationEnvironment] == name {
			t.Errorf("namespace %s was touched: %+v", namespace, ns.ObjectMeta)
		}
	}
	if ns := getNamespace(t, client, foreign); ns.Labels[gitlab.LabelManagedBy] != "" {
		t.Errorf("foreign namespace got the provider's label: %v", ns.Labels)
	}
}

// ensureClusterRole creates a ClusterRole for the test and removes it afterwards.
func ensureClusterRole(t *testing.T, client kubernetes.Interface, role *rbacv1.ClusterRole) {
	t.Helper()
	if _, err := client.RbacV1().ClusterRoles().Create(context.Background(), role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.RbacV1().ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{})
	})
}

// An environment's refresh reads its objects while the connection's probe is under way; when
// no API server answers, the probe's failure is what the plan reports, naming the server and
// the context, promptly (the reads that were sent are given up), and the state is kept.
func TestAccEnvironment_refreshOfAnUnreachableClusterNamesIt(t *testing.T) {
	client, name, namespace := envTest(t, "unreach")
	dead := deadKubeconfig(t)
	config := configEnvironment(name, namespace, 10)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return namespaceGone(client, namespace) },
		Steps: []resource.TestStep{
			{Config: config},
			{
				Config: fmt.Sprintf("provider \"gitlabk8s\" {\n  config_path = %q\n}\n", dead) + config,
				ExpectError: regexp.MustCompile(`(?s)Unable to Reach Kubernetes Cluster.*Reading the environment's namespace\s+` +
					regexp.QuoteMeta(namespace) + `.*https://127\.0\.0\.1:1.*context\s+"gone-cluster"`),
			},
			// The state survived the failed refresh: the environment is still there, unchanged.
			{Config: config, PlanOnly: true},
		},
	})
}
