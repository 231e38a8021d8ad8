package helmrelease

import (
	"context"
	"fmt"
	"time"

	helmkube "helm.sh/helm/v4/pkg/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"
)

// Helm asks its kube client for a waiter before every wait; the wrapper answers with the
// provider's for both ways Helm asks.
var (
	_ helmkube.Interface            = (*contextKubeClient)(nil)
	_ helmkube.InterfaceWaitOptions = (*contextKubeClient)(nil)
	_ helmkube.Waiter               = (*helmWaiter)(nil)
)

// contextKubeClient is Helm's kube client with the waits replaced: Helm's own waits take no
// context and know few failure modes. Every wait here stops when the operation's context is
// cancelled, and the readiness wait fails as soon as a pod shows a failure.
type contextKubeClient struct {
	*helmkube.Client
	ctx    context.Context
	waiter *waiter
	// adoptClientSide has Update hand the fields of ClientSideManagers to the provider's
	// manager first: set when the release was last written by client-side apply.
	adoptClientSide bool
	// leaveToOthers, when set, is Spec.LeaveToOthers: what Update applies of each object.
	leaveToOthers func(desired, previous, live []map[string]any) []map[string]any
	// owners, while an uninstall runs, reads the owners of the objects it deletes at once
	// (uninstall_owners.go).
	owners *ownersAhead
}

// Update applies targets over originals, the objects of the revision Helm upgrades or rolls
// back from, after adopting what client-side managers own in them (see adoptClientSideFields).
func (c *contextKubeClient) Update(originals, targets helmkube.ResourceList, options ...helmkube.ClientUpdateOption) (*helmkube.Result, error) {
	// Taken before the adoption, which replaces the originals' objects with the live ones.
	previous := previousObjects(originals, targets)
	if c.adoptClientSide {
		if err := adoptClientSideFields(c.ctx, originals); err != nil {
			return &helmkube.Result{}, err
		}
	}
	if c.leaveToOthers != nil {
		if err := c.yieldFields(targets, previous); err != nil {
			return &helmkube.Result{}, err
		}
	}
	return c.Client.Update(originals, targets, options...)
}

// previousObjects returns, for each target, its object in originals as the revision Helm
// moves from recorded it, matched as Helm matches them; nil for an object new in targets. An
// install that adopts existing objects hands Helm's targets as the originals: no revision
// recorded them, so they are new.
func previousObjects(originals, targets helmkube.ResourceList) []map[string]any {
	out := make([]map[string]any, len(targets))
	for i, target := range targets {
		original := originals.Get(target)
		if original == nil || original.Object == target.Object {
			continue
		}
		if u, ok := original.Object.(*unstructured.Unstructured); ok {
			out[i] = u.Object
		}
	}
	return out
}

// yieldFields replaces each target that exists with what leaveToOthers makes of it over its
// live version, given previous, the targets' objects in the revision Helm moves from. Helm
// records the manifest it rendered, not these objects.
func (c *contextKubeClient) yieldFields(targets helmkube.ResourceList, previous []map[string]any) error {
	var infos []*resource.Info
	var desired, prior []map[string]any
	for i, info := range targets {
		if u, ok := info.Object.(*unstructured.Unstructured); ok {
			infos = append(infos, info)
			desired = append(desired, u.Object)
			prior = append(prior, previous[i])
		}
	}
	live, err := getAll(c.ctx, c.waiter.reader, refsOf(infos), readsAtOnce)
	if err != nil {
		return fmt.Errorf("read the live objects to apply over: %w", err)
	}
	lives := make([]map[string]any, len(live))
	for i, obj := range live {
		if obj != nil {
			lives[i] = obj.Object
		}
	}
	for i, applied := range c.leaveToOthers(desired, prior, lives) {
		if i < len(infos) && applied != nil {
			infos[i].Object = &unstructured.Unstructured{Object: applied}
		}
	}
	return nil
}

// GetWaiter returns the provider's waiter, whatever the strategy; HookOnlyStrategy (an
// operation that does not wait) makes it wait for hooks and deletions only.
func (c *contextKubeClient) GetWaiter(strategy helmkube.WaitStrategy) (helmkube.Waiter, error) {
	return &helmWaiter{client: c, hooksOnly: strategy == helmkube.HookOnlyStrategy}, nil
}

// GetWaiterWithOptions is GetWaiter; Helm's wait options configure its own watcher.
func (c *contextKubeClient) GetWaiterWithOptions(strategy helmkube.WaitStrategy, _ ...helmkube.WaitOption) (helmkube.Waiter, error) {
	return c.GetWaiter(strategy)
}

// helmWaiter is the provider's waiter behind Helm's Waiter interface.
type helmWaiter struct {
	client *contextKubeClient
	// hooksOnly skips the waits for the release's objects, as Helm's hook-only strategy does.
	hooksOnly bool
}

func (w *helmWaiter) Wait(resources helmkube.ResourceList, timeout time.Duration) error {
	if w.hooksOnly {
		return nil
	}
	return w.client.waiter.waitReady(w.client.ctx, refsOf(resources), timeout)
}

// WaitWithJobs waits for Jobs to complete too; the readiness evaluation always does.
func (w *helmWaiter) WaitWithJobs(resources helmkube.ResourceList, timeout time.Duration) error {
	return w.Wait(resources, timeout)
}

// WaitForDelete waits whatever the strategy, as Helm 3 did for hooks and uninstalls.
func (w *helmWaiter) WaitForDelete(resources helmkube.ResourceList, timeout time.Duration) error {
	return w.client.waiter.waitDeleted(w.client.ctx, refsOf(resources), timeout)
}

// WatchUntilReady waits for hooks as Helm's hook watch does, for Jobs to complete and Pods to
// succeed, and like the release's objects otherwise: a failed one fails at once, naming its pod
// and why it ended; one that is gone has finished. Helm takes a hook of any other kind as ready
// once created.
func (w *helmWaiter) WatchUntilReady(resources helmkube.ResourceList, timeout time.Duration) error {
	var hooks []objectRef
	for _, info := range resources {
		if ref := refOf(info); isHookToWaitFor(ref) {
			hooks = append(hooks, ref)
		}
	}
	if err := w.client.waiter.waitHooks(w.client.ctx, hooks, timeout); err != nil {
		return fmt.Errorf("hook failed: %w", err)
	}
	return nil
}

// isHookToWaitFor reports whether Helm waits for a hook of ref's kind: a Job or a Pod.
func isHookToWaitFor(ref objectRef) bool {
	return ref.Resource.Group == "batch" && ref.Kind == "Job" || ref.Resource.Group == "" && ref.Kind == "Pod"
}

// refsOf names the objects of Helm's resource list.
func refsOf(resources helmkube.ResourceList) []objectRef {
	refs := make([]objectRef, 0, len(resources))
	for _, info := range resources {
		refs = append(refs, refOf(info))
	}
	return refs
}

func refOf(info *resource.Info) objectRef {
	ref := objectRef{Namespace: info.Namespace, Name: info.Name}
	if u, ok := info.Object.(*unstructured.Unstructured); ok {
		ref.NotRecord = notRecord(u.Object)
	}
	if info.Mapping != nil {
		ref.Resource = info.Mapping.Resource
		ref.APIVersion = info.Mapping.GroupVersionKind.GroupVersion().String()
		ref.Kind = info.Mapping.GroupVersionKind.Kind
	}
	return ref
}
