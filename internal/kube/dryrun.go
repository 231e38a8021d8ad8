package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/refusal"
)

// DryRunner asks the API server what it would do with objects, without changing anything:
// server-side apply with dryRun=All and strict field validation, so schema, immutable fields,
// admission (Pod Security, ResourceQuota, validating webhooks) all answer as for the real
// request. It is safe for concurrent use.
type DryRunner struct {
	clients *Clients
	dynamic dynamic.Interface
}

// warningsKey carries the collector of a dry run's warnings through its context.
type warningsKey struct{}

type warningCollector struct {
	mu       sync.Mutex
	messages []string
}

// collectWarnings hands the API server's warnings to the collector of the request's context.
type collectWarnings struct{}

func (collectWarnings) HandleWarningHeaderWithContext(ctx context.Context, _ int, _ string, message string) {
	if c, ok := ctx.Value(warningsKey{}).(*warningCollector); ok {
		c.mu.Lock()
		c.messages = append(c.messages, message)
		c.mu.Unlock()
	}
}

// NewDryRunner returns a DryRunner that uses the identity and host of c.
func NewDryRunner(c *Clients) (*DryRunner, error) {
	cfg := rest.CopyConfig(c.Config)
	cfg.WarningHandler = nil
	cfg.WarningHandlerWithContext = collectWarnings{}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create dynamic client for %s: %w", c.Source, err)
	}
	return &DryRunner{clients: c, dynamic: dc}, nil
}

// DryRunResult is what the API server said about one object.
type DryRunResult struct {
	// Warnings are the API server's warnings (Pod Security's "would violate PodSecurity", deprecations).
	Warnings []string
}

// DryRunApply applies obj by server-side apply as fieldManager with dryRun=All and
// fieldValidation=Strict. The errors it returns are typed: *ForbiddenError when RBAC refuses
// the request, *RefusedError when the API server or admission refuses the object,
// *UnknownKindError when the cluster does not serve the object's kind, *DryRunUnsupportedError
// when an admission webhook that declares side effects keeps the API server from answering a
// dry run, and an error for which IsNamespaceNotFound is true when the object's namespace does
// not exist.
func (d *DryRunner) DryRunApply(ctx context.Context, obj map[string]any, fieldManager string) (*DryRunResult, error) {
	u := &unstructured.Unstructured{Object: obj}
	gvk := u.GroupVersionKind()
	mapping, err := d.clients.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		// The cached discovery may predate a CRD installed since; ask once more.
		d.clients.Mapper.Reset()
		mapping, err = d.clients.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if meta.IsNoMatchError(err) {
		return nil, &UnknownKindError{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("find the API resource of %s: %w", gvk.String(), err)
	}
	var ri dynamic.ResourceInterface = d.dynamic.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = d.dynamic.Resource(mapping.Resource).Namespace(u.GetNamespace())
	}
	collector := &warningCollector{}
	ctx = context.WithValue(ctx, warningsKey{}, collector)
	body, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", describe(u), err)
	}
	force := true
	_, err = ri.Patch(ctx, u.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
		FieldManager: fieldManager, Force: &force, DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict",
	})
	if err != nil {
		return nil, dryRunError(err, mapping, u)
	}
	collector.mu.Lock()
	defer collector.mu.Unlock()
	return &DryRunResult{Warnings: collector.messages}, nil
}

func dryRunError(err error, mapping *meta.RESTMapping, u *unstructured.Unstructured) error {
	refused, ok := classifyRefusal(err)
	switch {
	case !ok:
		return fmt.Errorf("dry-run apply %s: %w", describe(u), err)
	case refused.Class == refusal.RBAC:
		return refusalOf(err, "patch", mapping.Resource.Group, mapping.Resource.Resource, u.GetNamespace(), u.GetName())
	case refused.Class == refusal.DryRunUnsupported:
		return &DryRunUnsupportedError{Webhook: refused.Webhook, Err: err}
	}
	return refused
}

// DryRunUnsupportedError reports an object the API server could not dry-run because an
// admission webhook that applies to it declares side effects (sideEffects Some or Unknown): the
// API server never calls such a webhook on a dry run, and refuses the dry run instead. Nothing
// is known about the object then; the apply is the first to ask.
type DryRunUnsupportedError struct {
	Webhook string
	Err     error
}

func (e *DryRunUnsupportedError) Error() string {
	return e.Err.Error()
}

func (e *DryRunUnsupportedError) Unwrap() error { return e.Err }

// UnknownKindError reports an object whose kind the cluster does not serve (yet: a CRD the
// same release installs).
type UnknownKindError struct {
	APIVersion, Kind string
	Err              error
}

func (e *UnknownKindError) Error() string {
	return fmt.Sprintf("the cluster does not serve %s %s: %v", e.APIVersion, e.Kind, e.Err)
}

func (e *UnknownKindError) Unwrap() error { return e.Err }

// IsNamespaceNotFound reports whether err says that the namespace of the object does not exist.
func IsNamespaceNotFound(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	details := status.Status().Details
	return details != nil && details.Kind == "namespaces"
}
