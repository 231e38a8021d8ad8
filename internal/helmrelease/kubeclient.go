package helmrelease

import (
	"context"
	"fmt"
	"time"

	helmkube "helm.sh/helm/v3/pkg/kube"
	"k8s.io/cli-runtime/pkg/resource"
)

// Helm type-asserts its kube client to these optional interfaces; the wrapper must keep them.
var (
	_ helmkube.Interface                    = (*contextKubeClient)(nil)
	_ helmkube.InterfaceExt                 = (*contextKubeClient)(nil)
	_ helmkube.InterfaceThreeWayMerge       = (*contextKubeClient)(nil)
	_ helmkube.InterfaceLogs                = (*contextKubeClient)(nil)
	_ helmkube.InterfaceDeletionPropagation = (*contextKubeClient)(nil)
	_ helmkube.InterfaceResources           = (*contextKubeClient)(nil)
)

// contextKubeClient is Helm's kube client with the waits replaced: Helm's own waits take no
// context and know few failure modes. Every wait here stops when the operation's context is
// cancelled, and the readiness wait fails as soon as a pod shows a failure.
type contextKubeClient struct {
	*helmkube.Client
	ctx    context.Context
	waiter *waiter
}

func (c *contextKubeClient) Wait(resources helmkube.ResourceList, timeout time.Duration) error {
	return c.waiter.waitReady(c.ctx, refsOf(resources), timeout)
}

// WaitWithJobs waits for Jobs to complete too; the readiness evaluation always does.
func (c *contextKubeClient) WaitWithJobs(resources helmkube.ResourceList, timeout time.Duration) error {
	return c.waiter.waitReady(c.ctx, refsOf(resources), timeout)
}

func (c *contextKubeClient) WaitForDelete(resources helmkube.ResourceList, timeout time.Duration) error {
	return c.waiter.waitDeleted(c.ctx, refsOf(resources), timeout)
}

// WatchUntilReady waits for hooks. Hook Jobs are waited for like the release's objects, so a
// failed one fails at once, naming its pod and why it ended; one that is gone has finished. Other hooks (Pods, which Helm
// waits for until they succeed) go to Helm's watch; it has no context, so it runs aside and the
// call returns when the context is cancelled; the watch itself ends at Helm's timeout.
func (c *contextKubeClient) WatchUntilReady(resources helmkube.ResourceList, timeout time.Duration) error {
	var jobs, others helmkube.ResourceList
	for _, info := range resources {
		if ref := refOf(info); ref.Kind == "Job" && ref.Resource.Group == "batch" {
			jobs = append(jobs, info)
		} else {
			others = append(others, info)
		}
	}
	if err := c.waiter.waitHooks(c.ctx, refsOf(jobs), timeout); err != nil {
		return fmt.Errorf("hook failed: %w", err)
	}
	if len(others) == 0 {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- c.Client.WatchUntilReady(others, timeout) }()
	select {
	case err := <-done:
		return err
	case <-c.ctx.Done():
		return context.Cause(c.ctx)
	}
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
	if info.Mapping != nil {
		ref.Resource = info.Mapping.Resource
		ref.APIVersion = info.Mapping.GroupVersionKind.GroupVersion().String()
		ref.Kind = info.Mapping.GroupVersionKind.Kind
	}
	return ref
}
