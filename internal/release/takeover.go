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

// UnownedError is an object the apply would create that exists without the release's Helm
// ownership metadata and belongs to no other release, so that Helm's install or upgrade would
// fail on it unless the release takes ownership: made with kubectl apply or another tool,
// carrying the release's annotations without Helm's managed-by label, or left by the uninstall
// of the release its annotations name (LeftBy), which no longer exists.
type UnownedError struct {
	// Object is the object's kind and name; Annotated says its annotations name this release.
	Object    string
	Annotated bool
	// LeftBy is the release the object's annotations name when that release no longer exists.
	LeftBy helmrelease.Owner
}

func (e *UnownedError) Error() string {
	if e.LeftBy != (helmrelease.Owner{}) {
		return fmt.Sprintf("%s exists with the annotations of Helm release %s, which no longer exists", e.Object, e.LeftBy)
	}
	if e.Annotated {
		return fmt.Sprintf("%s exists with the release's annotations but without the label app.kubernetes.io/managed-by=Helm", e.Object)
	}
	return fmt.Sprintf("%s exists without Helm's ownership metadata", e.Object)
}

// checkOwners refuses, when the release takes ownership, a rendering whose objects exist and
// belong to another Helm release that still exists: Helm's --take-ownership would adopt them
// from it, and the other release would then delete them at its next upgrade or uninstall. An
// object whose release no longer exists (its uninstall kept it, by its resource policy) is
// adopted. Without a cluster there is nothing to read, and the apply checks again.
func (r *Request) checkOwners(ctx context.Context, rendering *Rendering) error {
	if !r.TakeOwnership || r.cluster == nil {
		return nil
	}
	objs := rendering.Rendered.Objects
	live, err := r.cluster.LiveObjects(ctx, r.Namespace, objs)
	if err != nil {
		return &OwnedError{Err: err}
	}
	self, gone := r.owner(), r.ownersGone(ctx)
	for i, obj := range live {
		if obj == nil {
			continue
		}
		if owner, ok := helmrelease.OwnerOf(obj); ok && owner != self && !gone(owner) {
			return &OwnedError{Object: objectName(objs[i]), Owner: owner}
		}
	}
	return nil
}

// ownersGone returns a function that reports whether the release owner, which an object's
// annotations name, no longer exists: no revision of it is stored, or its newest was
// uninstalled. Such a release left the object at its uninstall (`helm.sh/resource-policy:
// keep`, as charts keep their CustomResourceDefinitions), and nothing will delete it again. An
// owner whose history cannot be read (an identity that may not read Secrets in its namespace)
// is taken to exist, and so is one the annotations name only in part. Each owner's revisions
// are read once, no record whole.
func (r *Request) ownersGone(ctx context.Context) func(helmrelease.Owner) bool {
	known := map[helmrelease.Owner]bool{}
	return func(owner helmrelease.Owner) bool {
		if owner.Namespace == "" || owner.Name == "" {
			return false
		}
		gone, ok := known[owner]
		if !ok {
			revisions, err := r.cluster.Revisions(ctx, owner.Namespace, owner.Name)
			gone = err == nil && helmrelease.Decide(revisions, helmrelease.Claim{}).State == helmrelease.StateAbsent
			known[owner] = gone
		}
		return gone
	}
}

// checkPlanOwners refuses at plan time what Helm's ownership check would refuse at apply:
// with take_ownership, objects of another release (checkOwners); without it, the objects next
// creates (createdBy) that exist without the release's ownership metadata, an OwnedError for
// one of another release, else an UnownedError. An upgrade that creates nothing reads nothing.
// Without a cluster, a read history to tell what the apply creates, or the objects read (an
// identity that may not get them), the apply's own Helm check is the only one.
func (r *Request) checkPlanOwners(ctx context.Context, rendering *Rendering, recorded *Recorded, next helmrelease.Next) error {
	if r.TakeOwnership {
		return r.checkOwners(ctx, rendering)
	}
	if r.cluster == nil {
		return nil
	}
	objs, known := r.createdBy(rendering, recorded, next)
	if !known || len(objs) == 0 {
		return nil
	}
	// What cannot be read is left to the apply, which reads it again.
	if live, err := r.cluster.LiveObjects(ctx, r.Namespace, objs); err == nil {
		return r.refuseUnowned(objs, live, r.ownersGone(ctx))
	}
	return nil
}

// refuseUnowned returns the refusal of the first of objs whose live version (nil when it does
// not exist) Helm would not install or upgrade the release over without taking ownership; an
// object of a release that no longer exists (gone) is one taking ownership adopts.
func (r *Request) refuseUnowned(objs, live []manifest.Object, gone func(helmrelease.Owner) bool) error {
	self := r.owner()
	for i, obj := range live {
		if obj == nil || self.Owns(obj) {
			continue
		}
		owner, _ := helmrelease.OwnerOf(obj)
		if owner != self && owner != (helmrelease.Owner{}) {
			if gone(owner) {
				return &UnownedError{Object: objectName(objs[i]), LeftBy: owner}
			}
			return &OwnedError{Object: objectName(objs[i]), Owner: owner}
		}
		return &UnownedError{Object: objectName(objs[i]), Annotated: owner == self}
	}
	return nil
}

// owner is the release as the ownership annotations of its objects name it.
func (r *Request) owner() helmrelease.Owner {
	return helmrelease.Owner{Namespace: r.Namespace, Name: r.Name}
}

// createdBy returns the rendered objects that next creates, those whose ownership Helm checks
// (action's existingResourceConflict): on an install every one, on an upgrade those that are
// not in the manifest of the revision it upgrades from (Next.UpgradesFrom). Objects named by
// generateName alone are left out, as Helm leaves them. known is false when Helm's history was
// not read (next is then a guess the apply makes again) or does not hold that manifest.
func (r *Request) createdBy(rendering *Rendering, recorded *Recorded, next helmrelease.Next) (created []manifest.Object, known bool) {
	if !r.History.Read {
		return nil, false
	}
	if next.Operation != helmrelease.OperationInstall && r.recordedHoldsAll(rendering, recorded, next.UpgradesFrom) {
		return nil, true
	}
	var previous map[string]bool
	if next.Operation != helmrelease.OperationInstall {
		if previous, known = r.revisionKeys(next.UpgradesFrom); !known {
			return nil, false
		}
	}
	for _, obj := range rendering.Rendered.Objects {
		if name, _ := objectMetadata(obj)["name"].(string); name != "" && !previous[r.helmKey(obj)] {
			created = append(created, obj)
		}
	}
	return created, true
}

// recordedHoldsAll reports whether the state's record of revision, the one the upgrade starts
// from, holds every rendered object: then the upgrade creates none, and the revision's manifest
// (a YAML parse of every object of a large release) need not be read.
func (r *Request) recordedHoldsAll(rendering *Rendering, recorded *Recorded, revision int) bool {
	if recorded == nil || recorded.Revision != revision {
		return false
	}
	for _, obj := range rendering.Rendered.Objects {
		if _, ok := recorded.Manifests[r.Redactor.Key(obj, r.Namespace)]; !ok {
			return false
		}
	}
	return true
}

// revisionKeys returns the helmKey of every object of the stored revision's manifest, false
// when the history does not hold it or its manifest cannot be read.
func (r *Request) revisionKeys(revision int) (map[string]bool, bool) {
	rel := r.History.record(revision)
	if rel == nil {
		return nil, false
	}
	objs, err := manifest.SplitDocuments(rel.Manifest)
	if err != nil {
		return nil, false
	}
	keys := make(map[string]bool, len(objs))
	for _, obj := range objs {
		keys[r.helmKey(obj)] = true
	}
	return keys, true
}

// helmKey is an object's identity as Helm's upgrade compares the rendering with the previous
// revision (action's objectKey): API version, kind, namespace and name, a namespaced object
// that names no namespace being in the release's and a cluster-scoped one in none, as
// LiveObjects reads them.
func (r *Request) helmKey(obj manifest.Object) string {
	metadata := objectMetadata(obj)
	namespace, _ := metadata["namespace"].(string)
	switch {
	case !r.namespaced(obj):
		namespace = ""
	case namespace == "":
		namespace = r.Namespace
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	name, _ := metadata["name"].(string)
	return apiVersion + "/" + kind + "/" + namespace + "/" + name
}

// objectMetadata is obj's metadata, nil when it has none.
func objectMetadata(obj manifest.Object) map[string]any {
	metadata, _ := obj["metadata"].(map[string]any)
	return metadata
}

// objectName is an object's kind and name, as a message names it.
func objectName(obj manifest.Object) string {
	name, _ := objectMetadata(obj)["name"].(string)
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
	return r.liveManifests(ctx, last, nil, liveRead{rec: rec, imported: redactor})
}
