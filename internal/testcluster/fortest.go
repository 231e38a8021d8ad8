package testcluster

import (
	"context"
	"os"
	"testing"
	"time"
)

// ForTest returns the local cluster, started if need be, and a context that ends with the test
// (three minutes at most). Without TF_ACC the test is skipped: it is an acceptance test.
func ForTest(t testing.TB) (context.Context, *Cluster) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 to run it against the local cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cluster, err := Ensure(ctx)
	if err != nil {
		t.Fatalf("start the local cluster: %v", err)
	}
	return ctx, cluster
}
