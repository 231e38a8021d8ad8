package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// crdResource is the API resource of CustomResourceDefinitions.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// establishedPoll is how often WaitEstablished reads the definitions again.
const establishedPoll = 250 * time.Millisecond

// Serves reports whether the cluster serves a kind at apiVersion, from its discovery, asked
// again when the cached discovery does not know the kind.
func (c *Clients) Serves(apiVersion, kind string) (bool, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return false, fmt.Errorf("parse apiVersion %q: %w", apiVersion, err)
	}
	_, _, err = c.resourceFor(gv.WithKind(kind), "")
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	return err == nil, err
}

// GetDefinition reads the CustomResourceDefinition called name. One that does not exist is an
// error for which IsNotFound is true.
func (c *Clients) GetDefinition(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	crd, err := c.Dynamic.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get CustomResourceDefinition %s: %w", name, refusalOf(err, "get", crdResource.Group, crdResource.Resource, "", name))
	}
	return crd, nil
}

// NotEstablishedError names the CustomResourceDefinitions that were not established when a
// wait for them ended.
type NotEstablishedError struct {
	// Missing do not exist; Pending exist but are not established yet.
	Missing, Pending []string
	Err              error
}

func (e *NotEstablishedError) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		parts = append(parts, "not found: "+strings.Join(e.Missing, ", "))
	}
	if len(e.Pending) > 0 {
		parts = append(parts, "not established: "+strings.Join(e.Pending, ", "))
	}
	return fmt.Sprintf("CustomResourceDefinitions %s: %v", strings.Join(parts, "; "), e.Err)
}

func (e *NotEstablishedError) Unwrap() error { return e.Err }

// WaitEstablished waits until every CustomResourceDefinition in names exists and its
// Established condition is True, so the API server serves its kinds, until ctx ends. Then the
// cached discovery is reset, so the kinds are found by this client set and by Helm's, which
// shares it. A definition it may not read is an error at once.
func (c *Clients) WaitEstablished(ctx context.Context, names []string) error {
	var missing, pending []string
	err := wait.PollUntilContextCancel(ctx, establishedPoll, true, func(ctx context.Context) (bool, error) {
		missing, pending = nil, nil
		for _, name := range names {
			crd, err := c.GetDefinition(ctx, name)
			switch {
			case IsNotFound(err):
				missing = append(missing, name)
			case err != nil:
				return false, err
			case !established(crd):
				pending = append(pending, name)
			}
		}
		return len(missing)+len(pending) == 0, nil
	})
	if err != nil {
		if len(missing)+len(pending) == 0 {
			return err
		}
		return &NotEstablishedError{Missing: slices.Clone(missing), Pending: slices.Clone(pending), Err: err}
	}
	c.Mapper.Reset()
	return nil
}

// established reports whether a CustomResourceDefinition's Established condition is True.
func established(crd *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conditions {
		cond, _ := c.(map[string]any)
		if cond["type"] == "Established" {
			return cond["status"] == "True"
		}
	}
	return false
}

// StoredVersions returns a CustomResourceDefinition's status.storedVersions: the versions its
// objects may still be stored in.
func StoredVersions(crd *unstructured.Unstructured) []string {
	stored, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
	return stored
}

// ApplyDefinition creates or updates a CustomResourceDefinition by server-side apply as
// fieldManager, forcing conflicts: the definition replaces what the cluster holds in every
// field it sets.
func (c *Clients) ApplyDefinition(ctx context.Context, crd map[string]any, fieldManager string) error {
	u := &unstructured.Unstructured{Object: crd}
	_, err := c.Dynamic.Resource(crdResource).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("apply CustomResourceDefinition %s: %w", u.GetName(), refusalOf(err, "patch", crdResource.Group, crdResource.Resource, "", u.GetName()))
	}
	return nil
}
