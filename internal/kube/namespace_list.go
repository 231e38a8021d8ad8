package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// listPageSize is how many namespaces one LIST asks for; clusters with
// thousands of leftover namespaces are read in pages.
const listPageSize = 500

// ListNamespaces returns every namespace of the cluster. A refusal by RBAC
// (listing namespaces is a cluster-wide right) is a *ForbiddenError.
func (c *Clients) ListNamespaces(ctx context.Context) ([]corev1.Namespace, error) {
	var out []corev1.Namespace
	opts := metav1.ListOptions{Limit: listPageSize}
	for {
		list, err := c.Kubernetes.CoreV1().Namespaces().List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list namespaces: %w", refusalOf(err, "list", "", "namespaces", "", ""))
		}
		out = append(out, list.Items...)
		if list.Continue == "" {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}
