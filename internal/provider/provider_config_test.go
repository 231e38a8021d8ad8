package provider

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/client-go/rest"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

const clusterDataConfig = `
data "gitlabk8s_cluster" "this" {}
`

func clusterChecks(contextName, username string) []statecheck.StateCheck {
	return []statecheck.StateCheck{
		statecheck.ExpectKnownValue("data.gitlabk8s_cluster.this", tfjsonpath.New("context"), knownvalue.StringExact(contextName)),
		statecheck.ExpectKnownValue("data.gitlabk8s_cluster.this", tfjsonpath.New("username"), knownvalue.StringExact(username)),
		statecheck.ExpectKnownValue("data.gitlabk8s_cluster.this", tfjsonpath.New("server_version"), knownvalue.StringRegexp(regexp.MustCompile(`^v1\.\d+\.\d+`))),
	}
}

func TestAccProvider_kubeconfigEnvironmentVariable(t *testing.T) {
	c := testAccCluster(t)
	// A colon-separated list, merged the way kubectl merges it: the missing first file is skipped.
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "missing")+string(os.PathListSeparator)+c.Kubeconfig)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:            `provider "gitlabk8s" {}` + clusterDataConfig,
			ConfigStateChecks: clusterChecks("admin", "admin"),
		}},
	})
}

func TestAccProvider_configPathAndContext(t *testing.T) {
	c := testAccCluster(t)
	t.Setenv("KUBECONFIG", "")
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "gitlabk8s" {
  config_path    = %q
  config_context = "ci-job"
}`, c.Kubeconfig) + clusterDataConfig,
			// The ci-job context impersonates a CI job, as the GitLab agent does.
			ConfigStateChecks: clusterChecks("ci-job", testcluster.CIJobContextJob.User()),
		}},
	})
}

func TestAccProvider_explicitHostTokenAndCA(t *testing.T) {
	c := testAccCluster(t)
	t.Setenv("KUBECONFIG", "")
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "gitlabk8s" {
  host                   = %q
  token                  = %q
  cluster_ca_certificate = file(%q)
}`, c.Host, c.AdminToken, c.CAFile) + clusterDataConfig,
			ConfigStateChecks: append(clusterChecks("", "admin"),
				statecheck.ExpectKnownValue("data.gitlabk8s_cluster.this", tfjsonpath.New("host"), knownvalue.StringExact(c.Host))),
		}},
	})
}

func TestAccProvider_environmentVariableFallbacks(t *testing.T) {
	c := testAccCluster(t)
	ca, err := os.ReadFile(c.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", "")
	t.Setenv("GITLABK8S_HOST", c.Host)
	t.Setenv("GITLABK8S_TOKEN", c.AgentToken)
	t.Setenv("GITLABK8S_CLUSTER_CA_CERTIFICATE", string(ca))
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:            `provider "gitlabk8s" {}` + clusterDataConfig,
			ConfigStateChecks: clusterChecks("", testcluster.AgentUser),
		}},
	})
}

func TestAccProvider_missingKubeconfig(t *testing.T) {
	testAccCluster(t)
	missing := filepath.Join(t.TempDir(), "nope", "kubeconfig")
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      fmt.Sprintf(`provider "gitlabk8s" { config_path = %q }`, missing) + clusterDataConfig,
			ExpectError: regexp.MustCompile(`(?s)Invalid Kubernetes Configuration.*config_path.*` + regexp.QuoteMeta(filepath.Base(filepath.Dir(missing)))),
		}},
	})
}

func TestAccProvider_unknownContext(t *testing.T) {
	testAccCluster(t)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      `provider "gitlabk8s" { config_context = "my-group/agent-config:review" }` + clusterDataConfig,
			ExpectError: regexp.MustCompile(`(?s)context "my-group/agent-config:review" does not exist.*available\s+contexts:\s+"admin",\s+"ci-job"`),
		}},
	})
}

// deadKubeconfig writes a kubeconfig whose current context, gone-cluster, points at a loopback
// port nothing listens on.
func deadKubeconfig(t *testing.T) string {
	t.Helper()
	dead := filepath.Join(t.TempDir(), "kubeconfig")
	kubeconfig := `apiVersion: v1
kind: Config
clusters:
- name: gone
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: someone
  user: {token: not-a-secret}
contexts:
- name: gone-cluster
  context: {cluster: gone, user: someone}
current-context: gone-cluster
`
	if err := os.WriteFile(dead, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return dead
}

func TestAccProvider_unreachableClusterNamesHostAndContext(t *testing.T) {
	c := testAccCluster(t)
	dead := deadKubeconfig(t)
	t.Setenv("KUBECONFIG", dead+string(os.PathListSeparator)+c.Kubeconfig)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      `provider "gitlabk8s" {}` + clusterDataConfig,
			ExpectError: regexp.MustCompile(`(?s)Unable to Reach Kubernetes Cluster.*https://127\.0\.0\.1:1.*context\s+"gone-cluster"`),
		}},
	})
}

// A merge-request pipeline's runner may carry a $KUBECONFIG naming a file that is not there
// (the deploy job's credentials). With kube_version set, the plan needs no cluster and does
// not connect; the apply, which does, fails naming the release and $KUBECONFIG.
func TestProvider_missingKubeconfigFailsOnlyWhatNeedsTheCluster(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "deploy", "kubeconfig")
	t.Setenv("KUBECONFIG", missing)
	t.Setenv("HOME", t.TempDir())
	for _, v := range []string{"CONFIG_PATH", "CONFIG_CONTEXT", "HOST", "KUBE_VERSION"} {
		t.Setenv(envPrefix+v, "")
	}
	config := offlineProvider("v1.30.4") + capsRelease("review-offline", writeCapabilitiesChart(t))
	testUnitResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config, PlanOnly: true, ExpectNonEmptyPlan: true},
			{
				Config:      config,
				ExpectError: wrappedPattern(`(?s)Invalid Kubernetes Configuration.*Release review-offline/caps needs the cluster.*\(\$KUBECONFIG\).*` + regexp.QuoteMeta(missing)),
			},
		},
	})
}

// The setting a resolution error is blamed on comes from the error's type, not its text: a
// kubeconfig at a path that says "context" is still config_path's.
func TestConfigErrorSetting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "context")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\ncontexts:\n- name: a\n  context: {cluster: a, user: a}\n"+
		"clusters:\n- name: a\n  cluster: {server: \"https://a:6443\"}\nusers:\n- name: a\n  user: {token: t}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	noInCluster := func() (*rest.Config, error) { return nil, errors.New("not in a cluster") }
	for _, tt := range []struct {
		name string
		opts kube.Options
		want string
	}{
		{"a context that does not exist", kube.Options{ConfigPath: kubeconfig, Context: "b"}, "config_context"},
		{"an unreadable config_path naming a context", kube.Options{ConfigPath: filepath.Join(dir, "missing"), Context: "a"}, "config_path"},
		{"an unreadable config_path", kube.Options{ConfigPath: filepath.Join(dir, "missing")}, "config_path"},
		{"host", kube.Options{Host: "https://a:6443", ClientCertificate: "not a certificate", ClientKey: "not a key"}, "host"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.InCluster = noInCluster
			_, _, err := kube.Resolve(tt.opts)
			if err == nil {
				t.Fatal("Resolve succeeded")
			}
			if got := configErrorSetting(tt.opts, err); got != tt.want {
				t.Errorf("configErrorSetting(%v) = %q, want %q", err, got, tt.want)
			}
		})
	}
}
