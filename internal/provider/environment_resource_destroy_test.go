package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

func TestAccEnvironment_destroyWithoutDeleteRightKeepsEverything(t *testing.T) {
	client, name, namespace := envTest(t, "cijob")
	ctx := context.Background()
	// The ci-job identity may create namespaces but not delete them, like a
	// GitLab agent's CI job. It lacks rights on ResourceQuotas, so no quota.
	config := fmt.Sprintf(`
provider "gitlabk8s" {
  config_context = "ci-job"
}

resource "gitlabk8s_environment" "test" {
  name      = %q
  namespace = %q
}
`, name, namespace)
	deleter := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "gitlabk8s-test:namespace-deleter"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"delete"}}},
	}
	ensureClusterRole(t, client, deleter)

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return namespaceGone(client, namespace) },
		Steps: []resource.TestStep{
			{Config: config},
			{
				Config:  config,
				Destroy: true,
				ExpectError: regexp.MustCompile(`(?s)Unable to Delete Namespace.*identity\s+"` + regexp.QuoteMeta(testcluster.CIJobContextJob.User()) + `"\s+may\s+not\s+delete\s+the\s+namespace\s+` + namespace +
					`.*verb\s+"delete"\s+on\s+the\s+resource\s+"namespaces".*namespace\s+and\s+the\s+Terraform\s+state\s+were\s+both\s+kept.*kubectl\s+create\s+rolebinding`),
			},
			{
				// The namespace is still there and the state still has it: once
				// a RoleBinding in the namespace grants the right, destroy works.
				PreConfig: func() {
					ns := getNamespace(t, client, namespace)
					if ns.DeletionTimestamp != nil {
						t.Fatalf("namespace %s is being deleted after a refused destroy", namespace)
					}
					binding := &rbacv1.RoleBinding{
						ObjectMeta: metav1.ObjectMeta{Name: "ci-job-may-delete", Namespace: namespace},
						RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: deleter.Name},
						Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: testcluster.CIJobContextJob.User()}},
					}
					if _, err := client.RbacV1().RoleBindings(namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config:  config,
				Destroy: true,
			},
		},
	})
}

func TestAccEnvironment_destroyTimeoutNamesTheBlocker(t *testing.T) {
	client, name, namespace := envTest(t, "stuck")
	config := environmentWithDeleteTimeout(name, namespace, "20s")

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return namespaceGone(client, namespace) },
		Steps: []resource.TestStep{
			applyAndHold(client, namespace, config),
			{
				Config:      config,
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)Namespace Deletion Timed Out.*` + namespace + `.*(NamespaceContentRemaining|NamespaceFinalizersRemaining).*` + regexp.QuoteMeta(heldFinalizer)),
			},
			{
				// Once the finalizer is gone, destroying again waits for the
				// terminating namespace and succeeds.
				PreConfig: func() { releaseNamespace(t, client, namespace) },
				Config:    config,
				Destroy:   true,
			},
		},
	})
}

func TestAccEnvironment_badInputFailsBeforeAnythingIsApplied(t *testing.T) {
	client := adminClient(t)
	name, namespace := envTestNames(t, "bad")
	config := func(attributes string) string {
		return fmt.Sprintf(`
resource "gitlabk8s_environment" "test" {
  name      = %q
  namespace = %q
%s
}
`, name, namespace, attributes)
	}
	// Each error must say what is wrong, and for top-level attributes point at
	// the attribute's line (Terraform quotes the line of the attribute path; it
	// cannot locate attributes inside an object value, so nested paths are
	// checked by the unit tests of package environment).
	steps := []struct {
		config string
		err    string
	}{
		{fmt.Sprintf(`resource "gitlabk8s_environment" "test" { name = "review@%s" }`, strings.ReplaceAll(namespace, "-", "")), `Invalid Environment Name.*contains '@'`},
		{`resource "gitlabk8s_environment" "test" { name = "/review" }`, `Invalid Environment Name.*starts with '/'`},
		{fmt.Sprintf(`resource "gitlabk8s_environment" "test" {
  name      = %q
  namespace = "Review_X"
}`, name), `namespace = "Review_X".*contains 'R' at position 1`},
		{fmt.Sprintf(`resource "gitlabk8s_environment" "test" {
  name      = %q
  namespace = "%s"
}`, name, strings.Repeat("a", 64)), `namespace = "a+".*64 characters long; a namespace can be at most 63`},
		{config(`  resource_quota = { "requests.cpu" = "2 cpus" }`), `resource_quota = \{ "requests.cpu" = "2 cpus" \}.*"2 cpus" is not a quantity`},
		{config(`  resource_quota = { "requests.gpu" = "1" }`), `resource_quota = \{ "requests.gpu".*"requests.gpu" is not a ResourceQuota resource name`},
		{config(`  resource_quota = { pods = "2.5" }`), `resource_quota = \{ pods.*counts whole objects; use a whole number`},
		{config(`  service_account = { enabled = false, name = "ci" }`), `service_account.enabled is false, so no ServiceAccount`},
		{config(`  network_policy = { enabled = false, allow_from_namespaces = ["ingress-nginx"] }`), `network_policy.enabled is false, so nothing is isolated`},
		{config(`  limit_range = { default = { cpu = "500m" }, default_request = { cpu = "1" } }`), `default request \(1, from limit_range.default_request\) is greater than the default limit`},
		{config(`  labels = { "app.kubernetes.io/managed-by" = "me" }`), `labels = \{.*The label app.kubernetes.io/managed-by is set by the provider`},
	}
	// A value known only at apply is checked then, before anything is applied.
	steps = append(steps, struct {
		config string
		err    string
	}{`
resource "terraform_data" "quota" {
  input = "2 cpus"
}
` + config(`  resource_quota = { "requests.cpu" = terraform_data.quota.output }`), `"2 cpus" is not a quantity`})
	var testSteps []resource.TestStep
	for _, s := range steps {
		// Terraform wraps diagnostic text: any space may be a line break.
		pattern := strings.ReplaceAll(s.err, " ", `\s+`)
		testSteps = append(testSteps, resource.TestStep{
			Config: s.config, PlanOnly: !strings.Contains(s.config, "terraform_data"), ExpectError: regexp.MustCompile(`(?s)` + pattern),
		})
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps:                    testSteps,
	})
	if err := namespaceGone(client, namespace); err != nil {
		t.Errorf("bad input left something behind: %v", err)
	}
}

func TestAccEnvironment_createFailureIsResumedByTheNextApply(t *testing.T) {
	client, name, namespace := envTest(t, "resume")
	config := func(context, quota string) string { return environmentAs(context, name, namespace, quota) }

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return namespaceGone(client, namespace) },
		Steps: []resource.TestStep{
			{
				// ci-job may not create ResourceQuotas: the namespace and the
				// objects before the quota are applied, then the apply stops.
				Config: config("ci-job", `resource_quota = { pods = "5" }`),
				ExpectError: regexp.MustCompile(`(?s)Unable to Apply Environment Object.*ResourceQuota/gitlabk8s-environment.*identity\s+"` + regexp.QuoteMeta(testcluster.CIJobContextJob.User()) + `"\s+may\s+not\s+patch` +
					`.*verb\s+"patch"\s+on\s+the\s+resource\s+"resourcequotas".*--verb=create,patch.*next\s+apply\s+adopts\s+it`),
			},
			{
				// Without the quota the next apply adopts the namespace it made.
				PreConfig: func() {
					if ns := getNamespace(t, client, namespace); ns.Annotations["gitlabk8s.io/environment"] != name {
						t.Fatalf("the failed apply left namespace %s without the marker: %v", namespace, ns.Annotations)
					}
				},
				Config: config("ci-job", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(envAddr, plancheck.ResourceActionCreate),
				}},
			},
			{
				// The identity does not change the environment; admin destroys it.
				Config:   config("admin", ""),
				PlanOnly: true,
			},
		},
	})
}

func TestAccEnvironment_retainOnDestroyKeepsTheNamespace(t *testing.T) {
	client, name, namespace := envTest(t, "retain")
	config := fmt.Sprintf(`
resource "gitlabk8s_environment" "test" {
  name              = %q
  namespace         = %q
  retain_on_destroy = true
}
`, name, namespace)

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			ns := getNamespace(t, client, namespace)
			if ns.DeletionTimestamp != nil {
				return fmt.Errorf("namespace %s is being deleted despite retain_on_destroy", namespace)
			}
			return nil
		},
		Steps: []resource.TestStep{{Config: config}},
	})
}

// Destroy is run again after a namespace deletion that timed out, as its error says to. By then
// the release is uninstalled and out of the state, and Terraform's destroy first plans the
// configuration as it stands, the release's install into the terminating namespace included: that
// plan must not fail because the API server takes no new object into the namespace, or the
// destroy could never be run again.
func TestAccEnvironment_destroyAgainWithAReleaseWhileTheNamespaceTerminates(t *testing.T) {
	client, name, namespace := envTest(t, "again")
	ctx := context.Background()
	config := environmentWithDeleteTimeout(name, namespace, "10s") + fmt.Sprintf(`
resource "gitlabk8s_release" "web" {
  name      = "web"
  namespace = gitlabk8s_environment.test.namespace
  chart     = %q
  wait      = false
}
`, chartserver.FixtureChart("web"))
	timedOut := regexp.MustCompile(`(?s)Namespace Deletion Timed Out.*` + namespace + `.*` + regexp.QuoteMeta(heldFinalizer))

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return namespaceGone(client, namespace) },
		Steps: []resource.TestStep{
			applyAndHold(client, namespace, config),
			{Config: config, Destroy: true, ExpectError: timedOut},
			{
				// The namespace still terminates: the destroy's plan of the release passes, and the
				// wait for the namespace is what fails again.
				PreConfig: func() {
					ns, err := client.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
					if err != nil || ns.DeletionTimestamp == nil {
						t.Fatalf("the namespace %s should be terminating: %v, %v", namespace, err, ns)
					}
				},
				Config: config, Destroy: true, ExpectError: timedOut,
			},
			{
				PreConfig: func() { releaseNamespace(t, client, namespace) },
				Config:    config,
				Destroy:   true,
			},
		},
	})
}

// heldFinalizer is the finalizer of the ConfigMap that applyAndHold creates.
const heldFinalizer = "gitlabk8s.test/hold"

// applyAndHold is a step that applies config, then creates in namespace a ConfigMap whose
// finalizer no controller removes, which keeps the namespace from going until releaseNamespace.
func applyAndHold(client kubernetes.Interface, namespace, config string) resource.TestStep {
	return resource.TestStep{
		Config: config,
		Check: func(*terraform.State) error {
			_, err := client.CoreV1().ConfigMaps(namespace).Create(context.Background(), &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{heldFinalizer}},
			}, metav1.CreateOptions{})
			return err
		},
	}
}

// releaseNamespace removes the finalizer applyAndHold set.
func releaseNamespace(t *testing.T, client kubernetes.Interface, namespace string) {
	t.Helper()
	ctx := context.Background()
	cm, err := client.CoreV1().ConfigMaps(namespace).Get(ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Finalizers = nil
	if _, err := client.CoreV1().ConfigMaps(namespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// environmentWithDeleteTimeout is the configuration of the environment gitlabk8s_environment.test
// whose destroy waits at most timeout.
func environmentWithDeleteTimeout(name, namespace, timeout string) string {
	return fmt.Sprintf(`
resource "gitlabk8s_environment" "test" {
  name      = %q
  namespace = %q
  timeouts {
    delete = %q
  }
}
`, name, namespace, timeout)
}
