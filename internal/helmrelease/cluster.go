package helmrelease

import (
	"context"
	"errors"
	"time"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/parallel"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// dryRunConcurrency bounds the dry-run requests in flight for one release.
const dryRunConcurrency = 8

// replacePoll is how often a replaced object is read until it is gone.
const replacePoll = 250 * time.Millisecond

// DryRunAnswer is what the API server answered to a server-side dry run of one object.
type DryRunAnswer struct {
	Result *kube.DryRunResult
	// Err is typed as kube.DryRunner.DryRunApply says.
	Err error
	// Unserved says the cluster does not serve the object's kind (Err is a
	// *kube.UnknownKindError).
	Unserved bool
}

// DryRun dry-runs objs by server-side apply as the field manager Helm applies with, a few at a
// time, and returns the answers in the order of objs.
func (c *Client) DryRun(ctx context.Context, objs []manifest.Object) ([]DryRunAnswer, error) {
	runner, err := kube.NewDryRunner(c.clients)
	if err != nil {
		return nil, err
	}
	answers := make([]DryRunAnswer, len(objs))
	parallel.Each(len(objs), dryRunConcurrency, func(i int) {
		result, err := runner.DryRunApply(ctx, objs[i], FieldManager)
		answers[i] = DryRunAnswer{Result: result, Err: err, Unserved: errors.As(err, new(*kube.UnknownKindError))}
	})
	return answers, nil
}

// ReplaceError is an object whose change only immutable fields refuse that could not be
// deleted, or was not gone within the timeout.
type ReplaceError struct {
	Key string
	Err error
}

func (e *ReplaceError) Error() string { return "replace " + e.Key + ": " + e.Err.Error() }
func (e *ReplaceError) Unwrap() error { return e.Err }

// ReplaceImmutable deletes each of objs (keyed by keys) whose change the API server refuses
// only because fields cannot change once set, and waits until it is gone, within timeout, so
// that the upgrade creates it again. It returns the keys it replaced; a *ReplaceError names the
// object that could not be replaced, and nothing after it was changed.
func (c *Client) ReplaceImmutable(ctx context.Context, keys []string, objs []manifest.Object, timeout time.Duration) ([]string, error) {
	answers, err := c.DryRun(ctx, objs)
	if err != nil {
		return nil, err
	}
	var replaced []string
	for i, a := range answers {
		var refused *kube.RefusedError
		if !errors.As(a.Err, &refused) || !refused.Immutable() {
			continue
		}
		c.logf("replacing %s: %s", keys[i], refused.Message)
		if err := c.deleteAndWait(ctx, objs[i], timeout); err != nil {
			return replaced, &ReplaceError{Key: keys[i], Err: err}
		}
		replaced = append(replaced, keys[i])
	}
	return replaced, nil
}

// deleteAndWait deletes obj and waits until it is gone, within timeout.
func (c *Client) deleteAndWait(ctx context.Context, obj manifest.Object, timeout time.Duration) error {
	if err := c.clients.Delete(ctx, obj, ""); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, replacePoll, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := c.clients.Get(ctx, obj)
		if kube.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// WaitEstablished waits until every named CustomResourceDefinition is established, within
// timeout (kube.Clients.WaitEstablished).
func (c *Client) WaitEstablished(ctx context.Context, names []string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return c.clients.WaitEstablished(ctx, names)
}

// ApplyDefinition applies a CustomResourceDefinition server-side as the field manager Helm
// applies with, forcing conflicts.
func (c *Client) ApplyDefinition(ctx context.Context, crd manifest.Object) error {
	obj, _ := manifest.DeepCopy(crd).(map[string]any)
	return c.clients.ApplyDefinition(ctx, obj, FieldManager)
}

// ServerSchemas returns the API server's schemas of gvs (kube.ServerSchemas).
func (c *Client) ServerSchemas(ctx context.Context, gvs []schema.GroupVersion) (map[schema.GroupVersion]*validate.ServerSchema, []error) {
	return c.clients.ServerSchemas(ctx, gvs)
}

// Serves reports whether discovery serves kind in apiVersion.
func (c *Client) Serves(apiVersion, kind string) (bool, error) {
	return c.clients.Serves(apiVersion, kind)
}

// StoredVersions returns the status.storedVersions of the CustomResourceDefinition name, and
// whether it exists.
func (c *Client) StoredVersions(ctx context.Context, name string) ([]string, bool, error) {
	live, err := c.clients.GetDefinition(ctx, name)
	switch {
	case kube.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return kube.StoredVersions(live), true, nil
}

// Namespace is what a plan reads of a release's namespace.
type Namespace struct {
	// Exists is false for a namespace not created yet.
	Exists bool
	// Terminating is set for a namespace being deleted: the API server takes no new object into
	// it until it is gone and created again.
	Terminating bool
	Labels      map[string]string
}

// Namespace reads namespace name.
func (c *Client) Namespace(ctx context.Context, name string) (Namespace, error) {
	ns, err := c.clients.GetNamespace(ctx, name)
	switch {
	case kube.IsNotFound(err):
		return Namespace{}, nil
	case err != nil:
		return Namespace{}, err
	}
	return Namespace{Exists: true, Terminating: ns.DeletionTimestamp != nil, Labels: ns.Labels}, nil
}
