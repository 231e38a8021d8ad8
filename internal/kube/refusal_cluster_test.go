package kube

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/refusal"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// The refusals are classified from what the local cluster's API server and its admission
// plugins really answer, each in a namespace of the test's own.
func TestClassifyRefusal_theAPIServersAnswers(t *testing.T) {
	ctx, admin := localAdmin(t)
	c := clientsFor(t, admin)
	ns := refusalNamespace(t, c.Kubernetes, map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})

	// RBAC: an identity nobody granted anything, by impersonation.
	nobody := rest.CopyConfig(admin)
	nobody.Impersonate = rest.ImpersonationConfig{UserName: "gitlabk8s-test:nobody"}
	_, err := clientsFor(t, nobody).Apply(ctx, configMap(ns, "rbac", nil))
	if f, ok := AsForbidden(err); !ok || f.Verb != "patch" || f.Resource != "configmaps" {
		t.Errorf("an apply RBAC refuses = %v, want a ForbiddenError for patch on configmaps", err)
	}
	expectDryRunClass(t, clientsFor(t, nobody), configMap(ns, "rbac", nil), refusal.RBAC)

	// Pod Security: the namespace enforces "restricted"; a privileged pod is refused (403).
	privileged := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "privileged", "namespace": ns},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "app:1", "securityContext": map[string]any{"privileged": true}}}}}
	expectDryRunClass(t, c, privileged, refusal.PodSecurity)
	_, err = c.Apply(ctx, privileged)
	if _, ok := AsForbidden(err); ok || !isClass(err, refusal.PodSecurity) {
		t.Errorf("an apply Pod Security refuses = %v, want a Pod Security RefusedError, not RBAC's ForbiddenError", err)
	}

	// Quota: no room for a Service (403 too).
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "no-services"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"services": apiresource.MustParse("0")}}}
	if _, err := c.Kubernetes.CoreV1().ResourceQuotas(ns).Create(ctx, quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitQuotaCounted(t, c.Kubernetes, ns, quota.Name)
	service := map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "web", "namespace": ns},
		"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}}}}
	expectDryRunClass(t, c, service, refusal.Quota)

	// Invalid: a field the schema does not declare (strict field validation), and a bad value.
	expectDryRunClass(t, c, configMap(ns, "unknown-field", map[string]any{"spec": map[string]any{"size": int64(1)}}), refusal.Invalid)
	expectDryRunClass(t, c, configMap(ns, "Not_A_Name", nil), refusal.Invalid)

	// Immutable: an immutable ConfigMap's data.
	frozen := configMap(ns, "frozen", map[string]any{"immutable": true, "data": map[string]any{"a": "1"}})
	if _, err := c.Apply(ctx, frozen); err != nil {
		t.Fatal(err)
	}
	expectDryRunClass(t, c, configMap(ns, "frozen", map[string]any{"immutable": true, "data": map[string]any{"a": "2"}}), refusal.Immutable)

	// Conflict: an apply that names a resourceVersion the object has moved on from.
	stale := configMap(ns, "frozen", map[string]any{"immutable": true, "data": map[string]any{"a": "1"}})
	stale["metadata"].(map[string]any)["resourceVersion"] = "1"
	expectDryRunClass(t, c, stale, refusal.Conflict)

	// A ValidatingAdmissionPolicy that refuses with 403 Forbidden, as policies may choose to.
	denyConfigMaps(t, c.Kubernetes, ns)
	expectDryRunClass(t, c, configMap(ns, "refused", map[string]any{"data": map[string]any{"refuse": "yes"}}), refusal.Policy)
	_, err = c.Apply(ctx, configMap(ns, "refused", map[string]any{"data": map[string]any{"refuse": "yes"}}))
	if _, ok := AsForbidden(err); ok || !isClass(err, refusal.Policy) {
		t.Errorf("an apply a policy refuses with 403 = %v, want a policy RefusedError, not RBAC's ForbiddenError", err)
	}
}

// The namespace being deleted refuses new objects with 403 and a cause of its own.
func TestClassifyRefusal_aTerminatingNamespace(t *testing.T) {
	ctx, admin := localAdmin(t)
	c := clientsFor(t, admin)
	ns := refusalNamespace(t, c.Kubernetes, nil)
	held := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"gitlabk8s.test/hold"}}}
	configMaps := c.Kubernetes.CoreV1().ConfigMaps(ns)
	if _, err := configMaps.Create(ctx, held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = configMaps.Patch(context.Background(), "held", "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	if err := c.Kubernetes.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		live, err := c.Kubernetes.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return err == nil && live.Status.Phase == corev1.NamespaceTerminating, nil
	})
	if err != nil {
		t.Fatalf("namespace %s is not terminating: %v", ns, err)
	}
	expectDryRunClass(t, c, configMap(ns, "late", nil), refusal.NamespaceTerminating)
}

func expectDryRunClass(t *testing.T, c *Clients, obj map[string]any, want refusal.Class) {
	t.Helper()
	runner, err := NewDryRunner(c)
	if err != nil {
		t.Fatal(err)
	}
	_, err = runner.DryRunApply(context.Background(), obj, FieldManager)
	if err == nil {
		t.Errorf("the dry run of %v was accepted, want a refusal of class %q", obj["metadata"], want)
		return
	}
	var status interface{ Status() metav1.Status }
	if errors.As(err, &status) {
		s := status.Status()
		t.Logf("%s: %d %s %q (causes %v)", want, s.Code, s.Reason, s.Message, s.Details)
	}
	if want == refusal.RBAC {
		if _, ok := AsForbidden(err); !ok {
			t.Errorf("the dry run RBAC refuses = %#v, want a ForbiddenError", err)
		}
		return
	}
	if !isClass(err, want) {
		t.Errorf("the dry run = %#v, want a RefusedError of class %q", err, want)
	}
}

func isClass(err error, class refusal.Class) bool {
	var refused *RefusedError
	return errors.As(err, &refused) && refused.Class == class
}

func configMap(namespace, name string, fields map[string]any) map[string]any {
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": namespace}}
	for k, v := range fields {
		obj[k] = v
	}
	return obj
}

// localAdmin is localCluster's context and the administrator's client configuration.
func localAdmin(t *testing.T) (context.Context, *rest.Config) {
	t.Helper()
	ctx, cluster := localCluster(t)
	admin, err := cluster.RESTConfig(testcluster.AdminContext)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, admin
}

// clientsFor builds the Clients a Connection would, for cfg.
func clientsFor(t *testing.T, cfg *rest.Config) *Clients {
	t.Helper()
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cached := memory.NewMemCacheClient(kc.Discovery())
	return &Clients{Config: cfg, Kubernetes: kc, Dynamic: dc, Discovery: cached, Mapper: restmapper.NewDeferredDiscoveryRESTMapper(cached)}
}

// refusalNamespace creates a namespace of the test's own with labels, deleted when it ends.
func refusalNamespace(t *testing.T, kc kubernetes.Interface, labels map[string]string) string {
	t.Helper()
	name := fmt.Sprintf("kube-refusal-%04x", rand.IntN(1<<16))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := kc.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kc.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return name
}

// waitQuotaCounted waits until the quota controller has counted the namespace's usage: until
// then, admission refuses with "status unknown" rather than the exceeded quota.
func waitQuotaCounted(t *testing.T, kc kubernetes.Interface, namespace, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		q, err := kc.CoreV1().ResourceQuotas(namespace).Get(ctx, name, metav1.GetOptions{})
		return err == nil && len(q.Status.Hard) > 0, nil
	})
	if err != nil {
		t.Fatalf("quota %s was not counted: %v", name, err)
	}
}

// denyConfigMaps binds a ValidatingAdmissionPolicy to namespace that refuses, with 403
// Forbidden, ConfigMaps that hold the key "refuse", and waits until the API server enforces it.
func denyConfigMaps(t *testing.T, kc kubernetes.Interface, namespace string) {
	t.Helper()
	ctx := context.Background()
	forbidden := metav1.StatusReasonForbidden
	remove, err := testcluster.DenyPolicy{
		Name:       "gitlabk8s-test-" + namespace,
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
		Expression: "!has(object.data) || !('refuse' in object.data)",
		Message:    "configmaps may not hold the key refuse",
		Reason:     &forbidden,
		Match: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{corev1.LabelMetadataName: namespace},
		}},
	}.Create(ctx, kc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remove)
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Data: map[string]string{"refuse": "yes"}}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := kc.CoreV1().ConfigMaps(namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil, nil
	})
	if err != nil {
		t.Fatalf("the policy for %s is not enforced: %v", namespace, err)
	}
}
