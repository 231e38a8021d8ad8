package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func terminatingNamespace() *corev1.Namespace {
	now := metav1.Now()
	return &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "review-x", UID: "uid-1", DeletionTimestamp: &now, Finalizers: []string{"example.com/meta"}},
		Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
		Status: corev1.NamespaceStatus{
			Phase: corev1.NamespaceTerminating,
			Conditions: []corev1.NamespaceCondition{
				{Type: corev1.NamespaceDeletionDiscoveryFailure, Status: corev1.ConditionFalse, Message: "All resources successfully discovered"},
				{Type: corev1.NamespaceFinalizersRemaining, Status: corev1.ConditionTrue, Message: "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"},
				{Type: corev1.NamespaceContentRemaining, Status: corev1.ConditionTrue, Message: "Some resources are remaining: configmaps. has 1 resource instances"},
			},
		},
	}
}

func TestNamespaceBlockers_namesConditionsAndFinalizers(t *testing.T) {
	got := NamespaceBlockers(terminatingNamespace())
	want := []string{
		"NamespaceContentRemaining: Some resources are remaining: configmaps. has 1 resource instances",
		"NamespaceFinalizersRemaining: Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances",
		"namespace spec.finalizers: kubernetes (removed by the namespace controller once the content is gone)",
		"namespace metadata.finalizers: example.com/meta",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("NamespaceBlockers =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestWaitForNamespaceDeletion_returnsWhenTheNamespaceIsGone(t *testing.T) {
	ns := terminatingNamespace()
	client := fake.NewClientset(ns)
	c := &Clients{Kubernetes: client}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.WaitForNamespaceDeletion(ctx, ns.Name, ns.UID) }()
	// Let the wait reach its watch, then delete the namespace.
	time.Sleep(100 * time.Millisecond)
	if err := client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("WaitForNamespaceDeletion = %v, want nil", err)
		}
	case <-ctx.Done():
		t.Fatal("WaitForNamespaceDeletion did not notice the deletion")
	}
}

func TestWaitForNamespaceDeletion_aNewNamespaceOfTheSameNameDoesNotCount(t *testing.T) {
	ns := terminatingNamespace()
	ns.UID = "uid-new"
	c := &Clients{Kubernetes: fake.NewClientset(ns)}
	if err := c.WaitForNamespaceDeletion(context.Background(), ns.Name, "uid-old"); err != nil {
		t.Fatalf("WaitForNamespaceDeletion = %v, want nil: the namespace with the old UID is gone", err)
	}
}

func TestWaitForNamespaceDeletion_timeoutNamesTheBlockers(t *testing.T) {
	ns := terminatingNamespace()
	c := &Clients{Kubernetes: fake.NewClientset(ns)}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := c.WaitForNamespaceDeletion(ctx, ns.Name, ns.UID)
	var stuck *NamespaceStuckError
	if !errors.As(err, &stuck) {
		t.Fatalf("WaitForNamespaceDeletion = %v, want a *NamespaceStuckError", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not wrap context.DeadlineExceeded", err)
	}
	for _, want := range []string{"namespace review-x is still terminating", "NamespaceContentRemaining: Some resources are remaining: configmaps.", "example.com/hold"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestDeleteNamespace_forbiddenIsTyped(t *testing.T) {
	client := fake.NewClientset(terminatingNamespace())
	client.PrependReactor("delete", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "review-x",
			errors.New(`User "ci-job" cannot delete resource "namespaces" in API group "" in the namespace "review-x"`))
	})
	c := &Clients{Kubernetes: client}
	err := c.DeleteNamespace(context.Background(), "review-x", "uid-1")
	f, ok := AsForbidden(err)
	if !ok {
		t.Fatalf("DeleteNamespace = %v, want a *ForbiddenError", err)
	}
	if f.Verb != "delete" || f.Resource != "namespaces" || f.Name != "review-x" || f.Object() != "namespaces/review-x" {
		t.Errorf("ForbiddenError = %+v", f)
	}
}

func TestDeleteNamespace_goneIsNotAnError(t *testing.T) {
	c := &Clients{Kubernetes: fake.NewClientset()}
	if err := c.DeleteNamespace(context.Background(), "review-x", "uid-1"); err != nil {
		t.Errorf("DeleteNamespace of a missing namespace = %v, want nil", err)
	}
}
