package kube

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WhoAmI returns the user name the API server sees for these clients, as `kubectl auth whoami`
// does. It is used to name the identity in permission errors.
func (c *Clients) WhoAmI(ctx context.Context) (string, error) {
	review, err := c.Kubernetes.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("ask the API server who this identity is: %w", err)
	}
	return review.Status.UserInfo.Username, nil
}
