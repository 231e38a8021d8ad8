package release

import (
	"context"
	"fmt"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// OwnedError is an object of the rendering that exists and belongs to another Helm release,
// which taking ownership never adopts; Err, when set, says why the owners could not be read.
type OwnedError struct {
	// Object is the object's kind and name, Owner the release its annotations name.
	Object string
	Owner  helmrelease.Owner
	Err    error
}

func (e *OwnedError) Error() string {
	if e.Err != nil {
		return "read the owners of the release's objects: " + e.Err.Error()
	}
	return fmt.Sprintf("%s belongs to Helm release %s", e.Object, e.Owner)
}

func (e *OwnedError) Unwrap() error { return e.Err }

// checkOwners refuses, when the release takes ownership, a rendering whose objects exist and
// belong to another Helm release: Helm's --take-ownership would adopt them from it, and the
// other release would then delete them at its next upgrade or uninstall. Without a cluster
// there is nothing to read, and the apply checks again.
func (r *Request) checkOwners(ctx context.Context, rendering *Rendering) error {
	if !r.TakeOwnership || r.cluster == nil {
		return nil
	}
	objs := rendering.Rendered.Objects
	live, err := r.cluster.LiveObjects(ctx, r.Namespace, objs)
	if err != nil {
		return &OwnedError{Err: err}
	}
	self := helmrelease.Owner{Namespace: r.Namespace, Name: r.Name}
	for i, obj := range live {
		if obj == nil {
			continue
		}
		if owner, ok := helmrelease.OwnerOf(obj); ok && owner != self {
			return &OwnedError{Object: objectName(objs[i]), Owner: owner}
		}
	}
	return nil
}

// objectName is an object's kind and name, as a message names it.
func objectName(obj manifest.Object) string {
	metadata, _ := obj["metadata"].(map[string]any)
	name, _ := metadata["name"].(string)
	kind, _ := obj["kind"].(string)
	return kind + " " + name
}

// deployedManifests returns the manifests of the newest revision of a release the
// configuration takes over, as an import reads them: the live objects, every value Helm
// recorded as given to it hidden, since which are sensitive only the configuration says.
func (r *Request) deployedManifests(ctx context.Context) (map[string]string, error) {
	last, err := r.History.Last(r.Namespace, r.Name)
	if err != nil {
		return nil, &ReadError{Step: ReadHistory, Err: err}
	}
	rec := manifest.RedactionRecord{Key: r.RedactionRecord.Key}
	redactor, _ := r.importRedactor(ctx, last, &rec)
	return r.liveManifests(ctx, last, nil, rec, redactor, false)
}
