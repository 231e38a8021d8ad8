package kube

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
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

// discoveryFailingNamespace is a terminating namespace the namespace controller could not
// empty because an aggregated API did not answer.
func discoveryFailingNamespace() *corev1.Namespace {
	ns := terminatingNamespace()
	ns.Finalizers = nil
	ns.Status.Conditions = []corev1.NamespaceCondition{{
		Type: corev1.NamespaceDeletionDiscoveryFailure, Status: corev1.ConditionTrue, Reason: "DiscoveryFailed",
		Message: "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: external.metrics.k8s.io/v1beta1: stale GroupVersion discovery: external.metrics.k8s.io/v1beta1",
	}}
	return ns
}

func apiService(name, service, status, reason, message string) *unstructured.Unstructured {
	obj := map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Available", "status": status, "reason": reason, "message": message},
		}},
	}
	if service != "" {
		namespace, svc, _ := strings.Cut(service, "/")
		obj["spec"] = map[string]any{"service": map[string]any{"namespace": namespace, "name": svc}}
	}
	return &unstructured.Unstructured{Object: obj}
}

func clientsWithAPIServices(ns *corev1.Namespace, services ...*unstructured.Unstructured) *Clients {
	objs := make([]runtime.Object, len(services))
	for i, s := range services {
		objs[i] = s
	}
	return &Clients{
		Kubernetes: fake.NewClientset(ns),
		Dynamic:    dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{apiServices: "APIServiceList"}, objs...),
	}
}

// A namespace that keeps reporting that discovery failed ends the wait after the grace, long
// before its timeout, naming the APIServices that do not answer and only those.
func TestWaitForNamespaceDeletion_discoveryFailureEndsTheWaitNamingTheAPIServices(t *testing.T) {
	ns := discoveryFailingNamespace()
	c := clientsWithAPIServices(ns,
		apiService("v1.apps", "", "True", "Local", "Local APIServices are always available"),
		apiService("v1beta1.external.metrics.k8s.io", "keda/keda-operator-metrics-apiserver", "False", "MissingEndpoints",
			"endpoints for service/keda-operator-metrics-apiserver in \"keda\" have no addresses with port name \"https\""),
		apiService("v1beta1.metrics.k8s.io", "kube-system/metrics-server", "False", "FailedDiscoveryCheck", "failing or missing response"),
	)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := c.waitForNamespaceDeletion(ctx, ns.Name, ns.UID, 200*time.Millisecond)
	var stuck *NamespaceStuckError
	if !errors.As(err, &stuck) {
		t.Fatalf("wait = %v, want a *NamespaceStuckError", err)
	}
	if !errors.Is(err, ErrDiscoveryBlocked) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v: want ErrDiscoveryBlocked, not the timeout", err)
	}
	if stuck.Waited > 20*time.Second {
		t.Errorf("the wait lasted %s; the grace was 200ms", stuck.Waited)
	}
	want := []UnavailableAPIService{
		{Name: "v1beta1.external.metrics.k8s.io", Service: "keda/keda-operator-metrics-apiserver", Reason: "MissingEndpoints",
			Message: "endpoints for service/keda-operator-metrics-apiserver in \"keda\" have no addresses with port name \"https\""},
		{Name: "v1beta1.metrics.k8s.io", Service: "kube-system/metrics-server", Reason: "FailedDiscoveryCheck", Message: "failing or missing response"},
	}
	if !reflect.DeepEqual(stuck.Unavailable, want) {
		t.Errorf("Unavailable =\n%+v\nwant\n%+v", stuck.Unavailable, want)
	}
}

// A discovery failure that clears within the grace (an adapter restarting) does not end the
// wait: the namespace may still go.
func TestWaitForNamespaceDeletion_aDiscoveryFailureThatClearsKeepsWaiting(t *testing.T) {
	ns := discoveryFailingNamespace()
	c := clientsWithAPIServices(ns)
	// The wait's watch is the test's: the cleared condition reaches the wait as soon as it reads
	// its watch, well within the grace, however loaded the machine. The store holds it too, for
	// the report read at the end.
	watcher := watch.NewFake()
	c.Kubernetes.(*fake.Clientset).PrependWatchReactor("namespaces", func(k8stesting.Action) (bool, watch.Interface, error) {
		return true, watcher, nil
	})
	cleared := ns.DeepCopy()
	cleared.Status.Conditions[0].Status = corev1.ConditionFalse
	if _, err := c.Kubernetes.CoreV1().Namespaces().UpdateStatus(context.Background(), cleared, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The first LIST sees the failure: the wait starts its grace from it.
	c.Kubernetes.(*fake.Clientset).PrependReactor("list", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, &corev1.NamespaceList{Items: []corev1.Namespace{*ns}}, nil
	})
	go watcher.Modify(cleared)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	err := c.waitForNamespaceDeletion(ctx, ns.Name, ns.UID, 700*time.Millisecond)
	var stuck *NamespaceStuckError
	if !errors.As(err, &stuck) {
		t.Fatalf("wait = %v, want a *NamespaceStuckError", err)
	}
	if errors.Is(err, ErrDiscoveryBlocked) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v: want the timeout, the discovery failure had cleared", err)
	}
	if len(stuck.Unavailable) != 0 {
		t.Errorf("Unavailable = %+v, want none (the namespace no longer says discovery failed)", stuck.Unavailable)
	}
}
