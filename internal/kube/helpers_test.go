package kube

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// localCluster returns the local cluster, started if need be, and a context that ends with the
// test (three minutes at most). Without TF_ACC the test is skipped.
func localCluster(t *testing.T) (context.Context, *testcluster.Cluster) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 to run it against the local cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cluster, err := testcluster.Ensure(ctx)
	if err != nil {
		t.Fatalf("start the local cluster: %v", err)
	}
	return ctx, cluster
}
