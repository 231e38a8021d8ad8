package testcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
)

// clusterNamespace starts (or reuses) the local cluster and gives the test a namespace of its
// own, deleted when the test ends.
func clusterNamespace(t *testing.T) (kubernetes.Interface, string) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" && os.Getenv("GITLABK8S_CLUSTER_TESTS") == "" {
		t.Skip("uses the local cluster: set TF_ACC=1 or GITLABK8S_CLUSTER_TESTS=1 to run it")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Minute)
	defer cancel()
	c, err := Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := c.Clientset(c.AdminContext)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "testcluster-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) })
	return admin, ns.Name
}

// poll retries check every half second for up to a minute; check returns done, or an error
// that ends the wait.
func poll(t *testing.T, what string, check func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, time.Minute, true, check); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// clusterManifest decodes the objects of file in scripts/cluster/manifests, which cluster-up
// applies: the one place the cluster's nodes and default StorageClass are named.
func clusterManifest[T any](file string) []T {
	f, err := os.Open(filepath.Join("..", "..", "scripts", "cluster", "manifests", file))
	if err != nil {
		panic(err)
	}
	defer f.Close()
	var out []T
	decoder := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var obj T
		if err := decoder.Decode(&obj); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			panic(fmt.Sprintf("%s: %v", file, err))
		}
		out = append(out, obj)
	}
}

// clusterNodes are the nodes cluster-up makes, by name, with their zones.
var clusterNodes = func() map[string]string {
	nodes := map[string]string{}
	for _, node := range clusterManifest[corev1.Node]("node.yaml") {
		nodes[node.Name] = node.Labels[corev1.LabelTopologyZone]
	}
	return nodes
}()

// clusterDefaultClass is the StorageClass cluster-up makes the cluster's default.
var clusterDefaultClass = func() string {
	for _, class := range clusterManifest[storagev1.StorageClass]("storageclass.yaml") {
		if class.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
			return class.Name
		}
	}
	panic("storageclass.yaml: no default StorageClass")
}()

func TestCluster_nodesAdvertiseEphemeralStorage(t *testing.T) {
	admin, _ := clusterNamespace(t)
	for name := range clusterNodes {
		node, err := admin.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		storage := node.Status.Allocatable[corev1.ResourceEphemeralStorage]
		if storage.Cmp(resource.MustParse("100Gi")) < 0 {
			t.Errorf("node %s allocatable ephemeral-storage = %s, want at least 100Gi so charts' resource presets schedule", name, storage.String())
		}
	}
}

// Replicas that must not share a node (a required pod anti-affinity by hostname, as Vault's
// injector and charts' HA modes have) each get a node of their own and become Ready, one per
// zone, as on a small real cluster; one more than there are nodes is left unscheduled.
func TestCluster_replicasKeptApartGetANodeEach(t *testing.T) {
	admin, ns := clusterNamespace(t)
	ctx := t.Context()
	labels := map[string]string{"app": "apart"}
	apart := &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
		TopologyKey:   "kubernetes.io/hostname",
	}}}
	for i := range len(clusterNodes) + 1 {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("apart-%d", i), Labels: labels},
			Spec: corev1.PodSpec{
				Affinity:   &corev1.Affinity{PodAntiAffinity: apart},
				Containers: []corev1.Container{{Name: "app", Image: "registry.example/app"}},
			},
		}
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var ready map[string]bool
	var unscheduled int
	poll(t, "every node runs one pod and one pod waits", func(ctx context.Context) (bool, error) {
		pods, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready, unscheduled = map[string]bool{}, 0
		for _, p := range pods.Items {
			switch {
			case podReady(&p):
				ready[p.Spec.NodeName] = true
			case p.Spec.NodeName == "":
				if _, reason, _ := podScheduled(&p); reason == corev1.PodReasonUnschedulable {
					unscheduled++
				}
			}
		}
		return len(ready) == len(clusterNodes) && unscheduled == 1, nil
	})
	for name, zone := range clusterNodes {
		node, err := admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := node.Labels[corev1.LabelTopologyZone]; got != zone {
			t.Errorf("node %s is in zone %q, want %q", name, got, zone)
		}
		if !ready[name] {
			t.Errorf("node %s runs no Ready pod: %v", name, ready)
		}
	}
}

// podScheduled returns the status, reason and message of p's PodScheduled condition.
func podScheduled(p *corev1.Pod) (corev1.ConditionStatus, string, string) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status, c.Reason, c.Message
		}
	}
	return "", "", ""
}

// A claim without a class gets the default one, local-cloud provisions its volume, and a pod
// using it becomes Ready.
func TestCluster_claimBindsThroughTheDefaultClass(t *testing.T) {
	admin, ns := clusterNamespace(t)
	ctx := t.Context()
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := admin.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "uses-data"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes:    []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}},
		},
	}
	if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var bound *corev1.PersistentVolumeClaim
	poll(t, "claim data binds", func(ctx context.Context) (bool, error) {
		var err error
		bound, err = admin.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
		return err == nil && bound.Status.Phase == corev1.ClaimBound, err
	})
	if class := bound.Spec.StorageClassName; class == nil || *class != clusterDefaultClass {
		t.Errorf("claim's class = %v, want the default %s", class, clusterDefaultClass)
	}
	pv, err := admin.CoreV1().PersistentVolumes().Get(ctx, bound.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Spec.HostPath == nil || !strings.HasSuffix(pv.Spec.HostPath.Path, "/"+pv.Name) {
		t.Errorf("volume %s source = %+v, want a hostPath named after it", pv.Name, pv.Spec.PersistentVolumeSource)
	}
	poll(t, "pod uses-data becomes Ready", func(ctx context.Context) (bool, error) {
		p, err := admin.CoreV1().Pods(ns).Get(ctx, "uses-data", metav1.GetOptions{})
		return err == nil && podReady(p), err
	})
}

// A LoadBalancer Service gets an address; one of another load balancer class does not.
func TestCluster_loadBalancerServiceGetsAnAddress(t *testing.T) {
	admin, ns := clusterNamespace(t)
	ctx := t.Context()
	other := "example.com/other"
	for name, class := range map[string]*string{"public": nil, "other-class": &other} {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{
				Type:              corev1.ServiceTypeLoadBalancer,
				LoadBalancerClass: class,
				Ports:             []corev1.ServicePort{{Port: 80}},
			},
		}
		if _, err := admin.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	poll(t, "Service public gets an address", func(ctx context.Context) (bool, error) {
		svc, err := admin.CoreV1().Services(ns).Get(ctx, "public", metav1.GetOptions{})
		return err == nil && len(svc.Status.LoadBalancer.Ingress) > 0, err
	})
	svc, err := admin.CoreV1().Services(ns).Get(ctx, "other-class", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(svc.Status.LoadBalancer.Ingress) > 0 {
		t.Errorf("Service of class %s got %v; only the default class is served", other, svc.Status.LoadBalancer.Ingress)
	}
}

// A pod labelled gitlabk8s.test/fail=Unready runs and never becomes ready, and the kubelet's
// Unhealthy event says why.
func TestCluster_unreadyStageFailsTheReadinessProbe(t *testing.T) {
	admin, ns := clusterNamespace(t)
	ctx := t.Context()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "unready", Labels: map[string]string{"gitlabk8s.test/fail": "Unready"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app"}}},
	}
	if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "pod unready has an Unhealthy event", func(ctx context.Context) (bool, error) {
		events, err := admin.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=unready,reason=Unhealthy"})
		if err != nil || len(events.Items) == 0 {
			return false, err
		}
		if msg := events.Items[0].Message; !strings.HasPrefix(msg, "Readiness probe failed:") {
			return false, fmt.Errorf("Unhealthy event says %q, want a readiness probe failure", msg)
		}
		return true, nil
	})
	p, err := admin.CoreV1().Pods(ns).Get(ctx, "unready", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.Phase != corev1.PodRunning || podReady(p) {
		t.Errorf("pod unready: phase %s, ready %t; want Running and not ready", p.Status.Phase, podReady(p))
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
