package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/readiness"
)

// GetNamespace reads a namespace. A namespace that does not exist is an
// error for which IsNotFound is true.
func (c *Clients) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	ns, err := c.Kubernetes.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get namespace %s: %w", name, refusalOf(err, "get", "", "namespaces", "", name))
	}
	return ns, nil
}

// DeleteNamespace deletes the namespace name if its UID is still uid, so a
// namespace recreated by someone else in the meantime is never deleted. A
// namespace already gone is not an error; a refusal by RBAC is a
// *ForbiddenError.
//
// Once it has deleted the namespace, it deletes the namespace's pods, with
// their own grace periods, as the namespace controller does: the controller
// first empties a namespace five seconds after its deletion, and pods still
// there then (a release's, whose owners the garbage collector has not
// reached yet) cost its second pass, five seconds more. The pods' deletion
// is the controller's own work begun sooner; when it fails (the identity may
// not delete pods), the controller deletes them as before.
func (c *Clients) DeleteNamespace(ctx context.Context, name string, uid types.UID) error {
	background := metav1.DeletePropagationBackground
	err := c.Kubernetes.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{
		PropagationPolicy: &background,
		Preconditions:     &metav1.Preconditions{UID: &uid},
	})
	if err == nil {
		_ = c.Kubernetes.CoreV1().Pods(name).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		return nil
	}
	// Conflict: the namespace is already terminating and still holds
	// content, or it is another namespace by now (the UID precondition
	// failed). Either way there is nothing to delete; the caller waits.
	if IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return fmt.Errorf("delete namespace %s: %w", name, refusalOf(err, "delete", "", "namespaces", "", name))
}

// NamespaceStuckError reports a namespace still terminating when the wait
// for its deletion ended, with what keeps it.
type NamespaceStuckError struct {
	Name string
	// Waited is how long the wait lasted.
	Waited time.Duration
	// Blockers are the namespace's conditions that hold it, as
	// "NamespaceContentRemaining: Some resources are remaining: ...", and
	// the finalizers it still carries.
	Blockers []string
	// Unavailable are the aggregated APIs that did not answer when the namespace said that
	// discovery failed: while one does not, the namespace controller deletes the content of no
	// namespace.
	Unavailable []UnavailableAPIService
	// Err is why the wait ended: context.DeadlineExceeded, or ErrDiscoveryBlocked.
	Err error
}

// UnavailableAPIService is an APIService whose Available condition is not true.
type UnavailableAPIService struct {
	// Name is the APIService's name, as v1beta1.external.metrics.k8s.io.
	Name string
	// Service is the namespace and name of the Service it sends requests to, as
	// "keda/keda-operator-metrics-apiserver"; empty when it names none.
	Service string
	// Reason and Message are those of its Available condition.
	Reason, Message string
}

// DiscoveryFailureGrace is how long a terminating namespace may report that discovery failed
// before the wait for its deletion ends: the namespace controller lists every kind the cluster
// serves before it deletes a namespace's content, and an aggregated API whose server is gone
// (a metrics adapter uninstalled or crashing) keeps every namespace of the cluster from going,
// however long one waits.
const DiscoveryFailureGrace = time.Minute

// ErrDiscoveryBlocked ends a wait for a namespace's deletion that reported for
// DiscoveryFailureGrace that discovery failed.
var ErrDiscoveryBlocked = errors.New("the namespace controller cannot discover every API group, so it deletes nothing")

func (e *NamespaceStuckError) Error() string {
	blockers := "the namespace reports no reason"
	if len(e.Blockers) > 0 {
		blockers = strings.Join(e.Blockers, "; ")
	}
	return fmt.Sprintf("namespace %s is still terminating after %s: %s: %v", e.Name, e.Waited.Round(time.Second), blockers, e.Err)
}

func (e *NamespaceStuckError) Unwrap() error { return e.Err }

// namespaceBlockingConditions are the conditions the namespace controller
// sets on a terminating namespace to say why it is not gone yet.
var namespaceBlockingConditions = []corev1.NamespaceConditionType{
	corev1.NamespaceContentRemaining,
	corev1.NamespaceFinalizersRemaining,
	corev1.NamespaceDeletionContentFailure,
	corev1.NamespaceDeletionDiscoveryFailure,
	corev1.NamespaceDeletionGVParsingFailure,
}

// NamespaceBlockers lists what holds a terminating namespace: its blocking
// conditions that are true, with their messages, then the finalizers of the
// namespace itself (spec.finalizers and metadata.finalizers).
func NamespaceBlockers(ns *corev1.Namespace) []string {
	var blockers []string
	for _, want := range namespaceBlockingConditions {
		for _, cond := range ns.Status.Conditions {
			if cond.Type == want && cond.Status == corev1.ConditionTrue {
				blockers = append(blockers, fmt.Sprintf("%s: %s", cond.Type, cond.Message))
			}
		}
	}
	var finalizers []string
	for _, f := range ns.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			finalizers = append(finalizers, string(f)+" (removed by the namespace controller once the content is gone)")
			continue
		}
		finalizers = append(finalizers, string(f))
	}
	if len(finalizers) > 0 {
		sort.Strings(finalizers)
		blockers = append(blockers, "namespace spec.finalizers: "+strings.Join(finalizers, ", "))
	}
	if len(ns.Finalizers) > 0 {
		meta := append([]string(nil), ns.Finalizers...)
		sort.Strings(meta)
		blockers = append(blockers, "namespace metadata.finalizers: "+strings.Join(meta, ", "))
	}
	return blockers
}

// stuckReportTimeout bounds the last read that says what blocks a namespace,
// made after the wait's own context has ended.
const stuckReportTimeout = 10 * time.Second

// WaitForNamespaceDeletion waits until the namespace name with UID uid is
// gone (a new namespace of the same name does not count), watching it rather
// than polling. When ctx ends first, it returns a *NamespaceStuckError naming
// what blocks the namespace.
//
// A namespace that reports for DiscoveryFailureGrace that discovery failed ends the wait early,
// with ErrDiscoveryBlocked and the APIServices that do not answer: nothing changes until someone
// mends or removes them.
func (c *Clients) WaitForNamespaceDeletion(ctx context.Context, name string, uid types.UID) error {
	return c.waitForNamespaceDeletion(ctx, name, uid, DiscoveryFailureGrace)
}

func (c *Clients) waitForNamespaceDeletion(ctx context.Context, name string, uid types.UID, grace time.Duration) error {
	start := time.Now()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	blocked := &discoveryBlock{grace: grace, cancel: cancel}
	defer blocked.stop()
	namespaces := c.Kubernetes.CoreV1().Namespaces()
	for {
		list, err := namespaces.List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
		if err != nil {
			if ctx.Err() != nil {
				return c.namespaceStuck(ctx, name, uid, start)
			}
			return fmt.Errorf("wait for namespace %s to be deleted: %w", name, refusalOf(err, "list", "", "namespaces", "", name))
		}
		if !containsUID(list.Items, uid) {
			return nil
		}
		for i := range list.Items {
			if list.Items[i].UID == uid {
				blocked.observe(&list.Items[i])
			}
		}
		w, err := namespaces.Watch(ctx, metav1.ListOptions{
			FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
			ResourceVersion: list.ResourceVersion,
		})
		if err != nil {
			if ctx.Err() != nil {
				return c.namespaceStuck(ctx, name, uid, start)
			}
			return fmt.Errorf("wait for namespace %s to be deleted: %w", name, refusalOf(err, "watch", "", "namespaces", "", name))
		}
		gone, err := namespaceDeleted(ctx, w, uid, blocked.observe)
		w.Stop()
		switch {
		case gone:
			return nil
		case ctx.Err() != nil:
			return c.namespaceStuck(ctx, name, uid, start)
		case err != nil:
			return fmt.Errorf("wait for namespace %s to be deleted: %w", name, err)
		}
		// The watch closed (the API server ends watches now and then): list again.
	}
}

// discoveryBlock ends a wait, through cancel, once the namespace has reported for grace that
// discovery failed.
type discoveryBlock struct {
	grace  time.Duration
	cancel context.CancelCauseFunc
	timer  *time.Timer
}

// observe reads the namespace's conditions as the wait sees it change.
func (b *discoveryBlock) observe(ns *corev1.Namespace) {
	switch failed := discoveryFailed(ns); {
	case failed && b.timer == nil:
		b.timer = time.AfterFunc(b.grace, func() { b.cancel(ErrDiscoveryBlocked) })
	case !failed && b.timer != nil:
		b.stop()
	}
}

func (b *discoveryBlock) stop() {
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
}

// discoveryFailed reports whether the namespace controller says it could not discover every
// API group for ns.
func discoveryFailed(ns *corev1.Namespace) bool {
	for _, cond := range ns.Status.Conditions {
		if cond.Type == corev1.NamespaceDeletionDiscoveryFailure && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// namespaceDeleted reads events until the namespace with uid is deleted, the
// watch closes or ctx ends; observe sees each change of the namespace.
func namespaceDeleted(ctx context.Context, w watch.Interface, uid types.UID, observe func(*corev1.Namespace)) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case event, ok := <-w.ResultChan():
			if !ok {
				return false, nil
			}
			switch event.Type {
			case watch.Deleted:
				if ns, isNamespace := event.Object.(*corev1.Namespace); isNamespace && ns.UID == uid {
					return true, nil
				}
			case watch.Added, watch.Modified:
				if ns, isNamespace := event.Object.(*corev1.Namespace); isNamespace && ns.UID == uid {
					observe(ns)
				}
			case watch.Error:
				// An expired resource version and similar: list and watch again.
				return false, nil
			}
		}
	}
}

func containsUID(items []corev1.Namespace, uid types.UID) bool {
	for _, ns := range items {
		if ns.UID == uid {
			return true
		}
	}
	return false
}

func (c *Clients) namespaceStuck(ctx context.Context, name string, uid types.UID, start time.Time) error {
	stuck := &NamespaceStuckError{Name: name, Waited: time.Since(start), Err: context.Cause(ctx)}
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stuckReportTimeout)
	defer cancel()
	ns, err := c.Kubernetes.CoreV1().Namespaces().Get(readCtx, name, metav1.GetOptions{})
	switch {
	case IsNotFound(err) || (err == nil && ns.UID != uid):
		// Gone just now.
		return nil
	case err != nil:
		stuck.Err = errors.Join(stuck.Err, fmt.Errorf("read the namespace's conditions: %w", err))
	default:
		stuck.Blockers = NamespaceBlockers(ns)
		if discoveryFailed(ns) {
			unavailable, err := c.unavailableAPIServices(readCtx)
			if err != nil {
				stuck.Err = errors.Join(stuck.Err, err)
			}
			stuck.Unavailable = unavailable
		}
	}
	return stuck
}

var apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// unavailableAPIServices lists the APIServices whose Available condition is not true, by name.
func (c *Clients) unavailableAPIServices(ctx context.Context) ([]UnavailableAPIService, error) {
	if c.Dynamic == nil {
		return nil, nil
	}
	list, err := c.Dynamic.Resource(apiServices).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the cluster's APIServices: %w", refusalOf(err, "list", apiServices.Group, apiServices.Resource, "", ""))
	}
	var out []UnavailableAPIService
	for _, item := range list.Items {
		available, found := readiness.ConditionOf(&item, "Available")
		if !found || available.True() {
			continue
		}
		u := UnavailableAPIService{Name: item.GetName(), Reason: available.Reason, Message: available.Message}
		if svcName, _, _ := unstructured.NestedString(item.Object, "spec", "service", "name"); svcName != "" {
			svcNamespace, _, _ := unstructured.NestedString(item.Object, "spec", "service", "namespace")
			u.Service = svcNamespace + "/" + svcName
		}
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
