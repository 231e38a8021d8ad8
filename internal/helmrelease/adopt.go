package helmrelease

import (
	"context"
	"fmt"

	helmkube "helm.sh/helm/v4/pkg/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/util/csaupgrade"
	"k8s.io/client-go/util/retry"

	release "helm.sh/helm/v4/pkg/release/v1"
)

// ClientSideManagers are the field managers that write a release's objects by client-side
// apply: the helm CLI (helm 3, and helm 4 with --server-side=false) and the provider before it
// applied server-side. Their fields are handed to [FieldManager]'s server-side apply before the
// provider applies over them; Helm's own hand-over knows only the manager Helm runs as.
var ClientSideManagers = []string{"helm", FieldManager}

// appliedClientSide reports whether rel's objects were last written by client-side apply:
// Helm 3 records no apply method, Helm 4 records "csa".
func appliedClientSide(rel *release.Release) bool {
	return rel != nil && rel.ApplyMethod != string(release.ApplyMethodServerSideApply)
}

// adoptClientSideFields makes the fields that ClientSideManagers own in each object of infos
// owned by FieldManager's apply, so that the apply that follows removes a field the chart no
// longer sets even when a client-side manager wrote it: server-side apply removes only fields
// no other manager owns. Objects that are gone are skipped.
func adoptClientSideFields(ctx context.Context, infos helmkube.ResourceList) error {
	for _, info := range infos {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := adoptObject(info); err != nil {
			return fmt.Errorf("hand the client-side fields of %s %s to %s: %w", info.Mapping.GroupVersionKind.Kind, info.Name, FieldManager, err)
		}
	}
	return nil
}

func adoptObject(info *resource.Info) error {
	managers := sets.New(ClientSideManagers...)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := info.Get(); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
		patch, err := csaupgrade.UpgradeManagedFieldsPatch(info.Object, managers, FieldManager)
		if err != nil || patch == nil {
			return err
		}
		helper := resource.NewHelper(info.Client, info.Mapping).WithFieldManager(FieldManager)
		obj, err := helper.Patch(info.Namespace, info.Name, types.JSONPatchType, patch, nil)
		if err != nil {
			return err
		}
		return info.Refresh(obj, true)
	})
}
