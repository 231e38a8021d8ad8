package kube

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// The fake clientset ignores delete preconditions, so the UID precondition is tested against
// the local cluster's API server.
func TestDeleteNamespace_aNamespaceRecreatedSinceTheReadSurvives(t *testing.T) {
	ctx, cluster := localCluster(t)
	kc, err := cluster.Clientset(testcluster.AdminContext)
	if err != nil {
		t.Fatal(err)
	}
	c := &Clients{Kubernetes: kc}
	name := fmt.Sprintf("kube-uid-precondition-%04x", rand.IntN(1<<16))
	namespaces := kc.CoreV1().Namespaces()
	create := func() {
		t.Helper()
		if _, err := namespaces.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = namespaces.Delete(context.Background(), name, metav1.DeleteOptions{}) })

	// The read a destroy makes before deleting.
	create()
	read, err := c.GetNamespace(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	// Meanwhile someone deletes the namespace and creates another under the same name.
	if err := namespaces.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := namespaces.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("namespace %s was not deleted: %v", name, err)
	}
	create()

	// The delete that follows the read names the UID read, so the API server refuses it, and
	// there is nothing of ours left to delete.
	if err := c.DeleteNamespace(ctx, name, read.UID); err != nil {
		t.Fatalf("DeleteNamespace of the namespace read before it was recreated: %v, want nil (nothing of ours is left)", err)
	}
	after, err := namespaces.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the namespace recreated under the name %s is gone: %v", name, err)
	}
	if after.UID == read.UID {
		t.Fatalf("namespace %s still has the UID read first; the test did not recreate it", name)
	}
	if after.DeletionTimestamp != nil {
		t.Fatalf("DeleteNamespace deleted the namespace recreated under the name %s (UID %s; it was asked for UID %s)", name, after.UID, read.UID)
	}
	// And the wait that follows the delete sees the namespace read gone at once.
	if err := c.WaitForNamespaceDeletion(ctx, name, read.UID); err != nil {
		t.Fatalf("WaitForNamespaceDeletion of the namespace read first: %v", err)
	}
}

// GetAll answers each object in the order asked, an object that does not exist with an error
// IsNotFound tells, and a kind the cluster does not serve with its own error.
func TestGetAll_answersInOrder(t *testing.T) {
	ctx, cluster := localCluster(t)
	c, err := NewConnection(Options{ConfigPath: cluster.Kubeconfig, Context: testcluster.AdminContext, InCluster: noInCluster}).Clients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ref := func(apiVersion, kind, namespace, name string) map[string]any {
		return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": namespace}}
	}
	var objs []map[string]any
	for i := range 20 {
		switch i % 4 {
		case 0:
			objs = append(objs, ref("v1", "Namespace", "", "default"))
		case 1:
			objs = append(objs, ref("v1", "ConfigMap", "default", "kube-root-ca.crt"))
		case 2:
			objs = append(objs, ref("v1", "ConfigMap", "default", fmt.Sprintf("missing-%d", i)))
		case 3:
			objs = append(objs, ref("nothing.gitlabk8s.test/v1", "Nothing", "default", "x"))
		}
	}
	live, errs := c.GetAll(ctx, objs)
	for i, obj := range objs {
		name := obj["metadata"].(map[string]any)["name"]
		switch i % 4 {
		case 0, 1:
			if errs[i] != nil || live[i] == nil || live[i].GetName() != name || live[i].GetKind() != obj["kind"] {
				t.Errorf("%d: got %v, %v; want %s %s", i, live[i], errs[i], obj["kind"], name)
			}
		case 2:
			if !IsNotFound(errs[i]) || live[i] != nil {
				t.Errorf("%d: got %v, %v; want not found", i, live[i], errs[i])
			}
		case 3:
			if errs[i] == nil || IsNotFound(errs[i]) {
				t.Errorf("%d: got %v, %v; want an error of a kind not served", i, live[i], errs[i])
			}
		}
	}
}

// Deleting a namespace begins its pods' deletion at once, as the namespace controller does
// only five seconds later; the pods of a namespace the UID no longer names are left alone.
func TestDeleteNamespace_deletesItsPodsAtOnce(t *testing.T) {
	ctx, cluster := localCluster(t)
	kc, err := cluster.Clientset(testcluster.AdminContext)
	if err != nil {
		t.Fatal(err)
	}
	c := &Clients{Kubernetes: kc}
	namespaces := kc.CoreV1().Namespaces()
	withPod := func(name string) *corev1.Namespace {
		t.Helper()
		ns, err := namespaces.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = namespaces.Delete(context.Background(), name, metav1.DeleteOptions{}) })
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "app"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app"}}},
		}
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := kc.CoreV1().Pods(name).Create(ctx, pod, metav1.CreateOptions{})
			return err == nil, nil // the namespace's default ServiceAccount may not be there yet
		})
		if err != nil {
			t.Fatalf("create a pod in %s: %v", name, err)
		}
		return ns
	}
	deleted := func(name string) bool {
		t.Helper()
		pod, err := kc.CoreV1().Pods(name).Get(ctx, "app", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true
		}
		if err != nil {
			t.Fatal(err)
		}
		return pod.DeletionTimestamp != nil
	}

	suffix := rand.IntN(1 << 16)
	ours := withPod(fmt.Sprintf("kube-delete-pods-%04x", suffix))
	if err := c.DeleteNamespace(ctx, ours.Name, ours.UID); err != nil {
		t.Fatal(err)
	}
	if !deleted(ours.Name) {
		t.Fatalf("the pod of namespace %s is not being deleted right after the namespace's deletion", ours.Name)
	}

	other := withPod(fmt.Sprintf("kube-keep-pods-%04x", suffix))
	if err := c.DeleteNamespace(ctx, other.Name, "another-uid"); err != nil {
		t.Fatal(err)
	}
	if deleted(other.Name) {
		t.Fatalf("the pod of namespace %s, which the UID asked for does not name, is being deleted", other.Name)
	}
}
