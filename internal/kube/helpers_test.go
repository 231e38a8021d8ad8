package kube

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// localCluster returns the local cluster, started if need be, and a context that ends with the
// test (three minutes at most). Without TF_ACC the test is skipped.
func localCluster(t *testing.T) (context.Context, *testcluster.Cluster) {
	t.Helper()
	return testcluster.ForTest(t)
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
