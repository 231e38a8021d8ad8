package provider

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/environment"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// secondProvider names a second, separately configured instance of the provider.
const secondProvider = "gitlabk8sb"

// clusterSetupExample is the one-time cluster setup the guide documents; its project ID is 1234.
const clusterSetupExample = "../../examples/ci-job-access/cluster-setup.yaml"

// With the documented cluster setup and CI jobs impersonated as the GitLab agent does, a job of
// environment A creates A and binds A's jobs there; a later job of A deploys into A; a job of A
// is refused in B's namespace, even by adopting B or binding itself there; a job of B cannot read
// A's Secrets; and each environment's stop job destroys it.
func TestAccEnvironment_ciJobAccessIsolatesEnvironments(t *testing.T) {
	c := testAccCluster(t)
	admin := adminClient(t)
	projectID := applyClusterSetup(t, c)
	nameA, nsA := envTestNames(t, "cija")
	nameB, nsB := envTestNames(t, "cijb")
	cleanupNamespace(t, admin, nsA)
	cleanupNamespace(t, admin, nsB)
	jobA := testcluster.CIJob{ID: "101", ProjectID: projectID, GroupIDs: []string{"77"}, EnvironmentSlug: gitlab.EnvironmentSlug(nameA), Tier: "development"}
	laterJobA := jobA
	laterJobA.ID = "102"
	jobB := testcluster.CIJob{ID: "201", ProjectID: projectID, GroupIDs: []string{"77"}, EnvironmentSlug: gitlab.EnvironmentSlug(nameB), Tier: "development"}
	dir := t.TempDir()
	kubeconfigA, kubeconfigB := ciJobKubeconfig(t, c, dir, jobA), ciJobKubeconfig(t, c, dir, jobB)

	// Two provider instances, one per job: aliases of one in-process provider would share its
	// configuration.
	providers := testAccRequiredProviders(TypeName, secondProvider) + fmt.Sprintf(`
provider "gitlabk8s" {
  config_path = %[1]q
  gitlab      = { project_id = %[2]q }
}

provider %[5]q {
  config_path = %[3]q
  gitlab      = { project_id = %[4]q }
}
`, kubeconfigA, projectID, kubeconfigB, projectID, secondProvider)
	environments := fmt.Sprintf(`
resource "gitlabk8s_environment" "a" {
  name          = %q
  namespace     = %q
  ci_job_access = {}
}

resource "gitlabk8s_environment" "b" {
  provider      = %s
  name          = %q
  namespace     = %q
  ci_job_access = {}
}
`, nameA, nsA, secondProvider, nameB, nsB)
	// A job of A that claims B's environment: it may read B's namespace, but not change it.
	intruder := fmt.Sprintf(`
resource "gitlabk8s_environment" "intruder" {
  name      = %q
  namespace = %q
  ci_job_access = {}
  depends_on = [gitlabk8s_environment.b]
}
`, nameB, nsB)

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: map[string]func() (tfprotov6.ProviderServer, error){
			TypeName:       testAccProtoV6ProviderFactories[TypeName],
			secondProvider: providerserver.NewProtocol6WithError(New("test")()),
		},
		CheckDestroy: func(*terraform.State) error {
			if err := namespaceGone(admin, nsA); err != nil {
				return err
			}
			return namespaceGone(admin, nsB)
		},
		Steps: []resource.TestStep{
			{
				Config: providers + environments,
				Check: func(*terraform.State) error {
					checkCIJobBinding(t, admin, nsA, gitlab.ProjectEnvironmentGroup(projectID, jobA.EnvironmentSlug))
					ctx := context.Background()
					// A later job of A deploys into A's namespace.
					secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app"}, StringData: map[string]string{"password": "a's secret"}}
					if _, err := ciJobClient(t, c, dir, laterJobA).CoreV1().Secrets(nsA).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
						t.Errorf("a later job of environment A creates a Secret in %s: %v", nsA, err)
					}
					b, a := ciJobClient(t, c, dir, jobB), ciJobClient(t, c, dir, jobA)
					// B's jobs cannot read A's Secrets.
					if _, err := b.CoreV1().Secrets(nsA).Get(ctx, "app", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
						t.Errorf("a job of environment B reads Secret app in %s: error %v, want Forbidden", nsA, err)
					}
					if _, err := b.CoreV1().Secrets(nsA).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
						t.Errorf("a job of environment B lists Secrets in %s: error %v, want Forbidden", nsA, err)
					}
					// A's jobs cannot deploy into B's namespace, nor bind themselves there or in a
					// namespace that is nobody's environment.
					cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "from-a"}}
					if _, err := a.CoreV1().ConfigMaps(nsB).Create(ctx, cm, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
						t.Errorf("a job of environment A creates a ConfigMap in %s: error %v, want Forbidden", nsB, err)
					}
					for _, ns := range []string{nsB, "kube-system"} {
						binding := selfBinding(projectID, jobA.EnvironmentSlug)
						_, err := a.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{})
						if err == nil {
							_ = admin.RbacV1().RoleBindings(ns).Delete(ctx, binding.Name, metav1.DeleteOptions{})
						}
						if !apierrors.IsForbidden(err) {
							t.Errorf("a job of environment A binds itself in %s: error %v, want Forbidden", ns, err)
						}
					}
					return nil
				},
			},
			{
				Config:      providers + environments + intruder,
				ExpectError: wrappedText("Unable to Apply Environment Object", "Applying Namespace/"+nsB, "CI job may change only namespaces of its own environment"),
			},
			{
				// Each environment's stop job destroys it: the steps' final destroy runs as the
				// jobs, and CheckDestroy sees both namespaces gone.
				Config: providers + environments,
			},
		},
	})
}

// applyClusterSetup applies the guide's cluster setup for a project of this test's own, as a
// cluster administrator does, and returns the project's ID. The project's own objects are
// removed when the test ends; the shared ClusterRoles stay, as they would in a cluster.
func applyClusterSetup(t *testing.T, c *testcluster.Cluster) string {
	t.Helper()
	n, err := rand.Int(rand.Reader, big.NewInt(900_000))
	if err != nil {
		t.Fatal(err)
	}
	projectID := fmt.Sprint(100_000 + n.Int64())
	manifest, err := os.ReadFile(clusterSetupExample)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "cluster-setup.yaml")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(string(manifest), "1234", projectID)), 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl := func(args ...string) {
		t.Helper()
		cmd := exec.Command(c.KubectlPath, append([]string{"--kubeconfig", c.Kubeconfig, "--context", c.AdminContext}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	kubectl("apply", "-f", file)
	waitForPolicy(t, c, projectID)
	t.Cleanup(func() {
		kubectl("delete", "--ignore-not-found",
			"clusterrolebinding/gitlabk8s:environment-creator:project-"+projectID,
			"validatingadmissionpolicy/gitlabk8s-ci-job-environments-project-"+projectID,
			"validatingadmissionpolicybinding/gitlabk8s-ci-job-environments-project-"+projectID)
	})
	return projectID
}

// waitForPolicy waits until the API server enforces the new admission policy, which takes it a
// moment: until a job of the project is refused binding itself in kube-system (a dry run).
func waitForPolicy(t *testing.T, c *testcluster.Cluster, projectID string) {
	t.Helper()
	probe := ciJobClient(t, c, t.TempDir(), testcluster.CIJob{ID: "1", ProjectID: projectID, EnvironmentSlug: "probe", Tier: "development"})
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, last = probe.RbacV1().RoleBindings("kube-system").Create(ctx, selfBinding(projectID, "probe"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsForbidden(last) && strings.Contains(last.Error(), "ValidatingAdmissionPolicy"), nil
	})
	if err != nil {
		t.Fatalf("the admission policy of project %s is not enforced after 30s; last answer: %v", projectID, last)
	}
}

func ciJobKubeconfig(t *testing.T, c *testcluster.Cluster, dir string, job testcluster.CIJob) string {
	t.Helper()
	path, err := c.CIJobKubeconfig(dir, job)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// ciJobClient is a client of the job as the agent impersonates it.
func ciJobClient(t *testing.T, c *testcluster.Cluster, dir string, job testcluster.CIJob) kubernetes.Interface {
	t.Helper()
	config, err := clientcmd.BuildConfigFromFlags("", ciJobKubeconfig(t, c, dir, job))
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func checkCIJobBinding(t *testing.T, admin kubernetes.Interface, namespace, group string) {
	t.Helper()
	binding, err := admin.RbacV1().RoleBindings(namespace).Get(context.Background(), environment.CIJobRoleBindingName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("RoleBinding %s in %s: %v", environment.CIJobRoleBindingName, namespace, err)
	}
	if binding.RoleRef.Kind != "ClusterRole" || binding.RoleRef.Name != environment.DefaultCIJobClusterRole ||
		len(binding.Subjects) != 1 || binding.Subjects[0].Kind != "Group" || binding.Subjects[0].Name != group {
		t.Errorf("RoleBinding %s in %s binds %+v to %+v, want the group %s to ClusterRole %s",
			binding.Name, namespace, binding.Subjects, binding.RoleRef, group, environment.DefaultCIJobClusterRole)
	}
}

func selfBinding(projectID, slug string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "gitlabk8s-intruder"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: environment.DefaultCIJobClusterRole},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "Group", Name: gitlab.ProjectEnvironmentGroup(projectID, slug)}},
	}
}
