// Command local-cloud plays, for the local test cluster, the parts of a cloud that a small real
// cluster has and kwok does not: a dynamic volume provisioner behind the default StorageClass,
// and a load balancer that gives every LoadBalancer Service an address.
//
// Volumes are hostPath PersistentVolumes under -root: no kubelet mounts them (kwok plays the
// node), so all that matters is that a claim binds the way it does on a real cluster. A
// StorageClass of this provisioner with the parameter `fail` makes every provisioning fail with
// that message, for tests of ProvisioningFailed.
//
// Load balancer addresses are host names under .invalid, which no resolver answers, so nothing
// can ever send traffic to them. A Service with a spec.loadBalancerClass is left alone, as a
// cloud's controller leaves the classes of other implementations: it stays without an address.
//
// It listens on no port and elects no leader: one runs per cluster, started by cluster-up.sh.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// ProvisionerName is the provisioner of the default StorageClass (manifests/storageclass.yaml).
const ProvisionerName = "gitlabk8s.local/hostpath"

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	root := flag.String("root", "", "folder holding the volumes' directories")
	flag.Parse()
	if *kubeconfig == "" || *root == "" {
		fmt.Fprintln(os.Stderr, "local-cloud: -kubeconfig and -root are required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, *root); err != nil {
		fmt.Fprintln(os.Stderr, "local-cloud:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, root string) error {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("read kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	go runLoadBalancers(ctx, client)
	provisioner := controller.NewProvisionController(ctx, client, ProvisionerName, hostPathProvisioner{root: root},
		controller.LeaderElection(false),
		controller.MetricsPort(0),
		// A claim is retried quickly: tests wait for the ProvisioningFailed event.
		controller.FailedProvisionThreshold(0),
		controller.RetryIntervalMax(30*time.Second),
	)
	klog.FromContext(ctx).Info("local-cloud running", "provisioner", ProvisionerName, "root", root)
	provisioner.Run(ctx)
	return nil
}

// hostPathProvisioner makes a directory under root per volume.
type hostPathProvisioner struct{ root string }

func (p hostPathProvisioner) Provision(_ context.Context, opts controller.ProvisionOptions) (*corev1.PersistentVolume, controller.ProvisioningState, error) {
	if message, ok := opts.StorageClass.Parameters["fail"]; ok {
		return nil, controller.ProvisioningFinished, errors.New(message)
	}
	path := filepath.Join(p.root, opts.PVName)
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, controller.ProvisioningFinished, fmt.Errorf("create volume directory: %w", err)
	}
	reclaim := corev1.PersistentVolumeReclaimDelete
	if opts.StorageClass.ReclaimPolicy != nil {
		reclaim = *opts.StorageClass.ReclaimPolicy
	}
	hostPathType := corev1.HostPathDirectoryOrCreate
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: opts.PVName},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: reclaim,
			AccessModes:                   opts.PVC.Spec.AccessModes,
			VolumeMode:                    opts.PVC.Spec.VolumeMode,
			MountOptions:                  opts.StorageClass.MountOptions,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: opts.PVC.Spec.Resources.Requests[corev1.ResourceStorage]},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: path, Type: &hostPathType},
			},
		},
	}, controller.ProvisioningFinished, nil
}

func (p hostPathProvisioner) Delete(_ context.Context, pv *corev1.PersistentVolume) error {
	if pv.Spec.HostPath == nil {
		return &controller.IgnoredError{Reason: "not a hostPath volume"}
	}
	path := filepath.Clean(pv.Spec.HostPath.Path)
	// Only ever remove what this provisioner made.
	if filepath.Dir(path) != filepath.Clean(p.root) {
		return &controller.IgnoredError{Reason: "volume is outside " + p.root}
	}
	return os.RemoveAll(path)
}

// runLoadBalancers gives every LoadBalancer Service of the default class an address.
func runLoadBalancers(ctx context.Context, client kubernetes.Interface) {
	logger := klog.FromContext(ctx)
	factory := informers.NewSharedInformerFactory(client, 10*time.Minute)
	informer := factory.Core().V1().Services().Informer()
	handle := func(obj any) {
		svc, ok := obj.(*corev1.Service)
		if !ok || !needsAddress(svc) {
			return
		}
		if err := assignAddress(ctx, client, svc); err != nil {
			logger.Error(err, "assign load balancer address", "service", svc.Namespace+"/"+svc.Name)
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handle,
		UpdateFunc: func(_, obj any) { handle(obj) },
	}); err != nil {
		logger.Error(err, "watch services")
		return
	}
	factory.Start(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()
}

func needsAddress(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.LoadBalancerClass == nil &&
		len(svc.Status.LoadBalancer.Ingress) == 0 && svc.DeletionTimestamp == nil
}

func assignAddress(ctx context.Context, client kubernetes.Interface, svc *corev1.Service) error {
	updated := svc.DeepCopy()
	updated.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{Hostname: svc.Name + "." + svc.Namespace + ".lb.invalid"}}
	_, err := client.CoreV1().Services(svc.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: "local-cloud"})
	return err
}
