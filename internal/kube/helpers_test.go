package kube

import (
	"context"
	"os"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

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

// status is an answer of the API server as it comes over the wire.
func status(code int32, reason metav1.StatusReason, message string, causes ...metav1.StatusCause) error {
	s := metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: message}
	if len(causes) > 0 {
		s.Details = &metav1.StatusDetails{Causes: causes}
	}
	return &apierrors.StatusError{ErrStatus: s}
}

// adminClients are the clients of the local cluster's admin, as the OpenAPI documents are read.
func adminClients(t *testing.T) (context.Context, *Clients) {
	t.Helper()
	ctx, cluster := localCluster(t)
	cfg, err := cluster.RESTConfig(testcluster.AdminContext)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, &Clients{Config: cfg, Kubernetes: kc}
}
