package provider

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// testAccProtoV6ProviderFactories serves the provider in-process to the terraform CLI.
var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	TypeName: providerserver.NewProtocol6WithError(New("test")()),
}

var (
	clusterOnce sync.Once
	cluster     *testcluster.Cluster
	clusterErr  error
)

// testAccCluster returns the local cluster, starting it when none is running. It skips the
// test unless TF_ACC is set, as resource.Test does, so unit runs never start a cluster.
// It points $KUBECONFIG at the cluster's admin context, the default of every acceptance test.
func testAccCluster(t *testing.T) *testcluster.Cluster {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 to run it against the local cluster")
	}
	clusterOnce.Do(func() { cluster, clusterErr = testcluster.Ensure(context.Background()) })
	if clusterErr != nil {
		t.Fatalf("start the local cluster: %v", clusterErr)
	}
	// terraform-plugin-testing runs this CLI (scripts/test.sh sets it); make test's summary
	// reports it.
	if path := os.Getenv("TF_ACC_TERRAFORM_PATH"); path != "" {
		t.Logf("toolchain: terraform-plugin-testing=%s", path)
	}
	// Nothing from the developer's machine may leak into a test's provider configuration.
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", cluster.Kubeconfig)
	for _, v := range []string{"CONFIG_PATH", "CONFIG_CONTEXT", "HOST", "TOKEN", "CLUSTER_CA_CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY", "INSECURE", "KUBE_VERSION", "API_VERSIONS"} {
		t.Setenv(envPrefix+v, "")
	}
	for _, v := range []string{"CI_PROJECT_ID", "CI_PROJECT_PATH_SLUG", "CI_ENVIRONMENT_NAME", "CI_ENVIRONMENT_SLUG", "CI_PIPELINE_URL", "CI_JOB_URL", "CI_COMMIT_SHA", "CI_MERGE_REQUEST_IID"} {
		t.Setenv(v, "")
	}
	return cluster
}
