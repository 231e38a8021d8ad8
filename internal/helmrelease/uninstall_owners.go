package helmrelease

import (
	"context"
	"fmt"
	"io"
	"sync"

	helmkube "helm.sh/helm/v4/pkg/kube"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/resource"
)

// ownersAhead reads at once what Helm's uninstall would read one object after another. Since
// Helm 4.3 the uninstall reads every object of the release before deleting it, and deletes only
// those the release owns (action's verifyOwnershipBeforeDelete): one GET per object, each
// waiting for the one before, which through the GitLab agent's tunnel is a round trip each
// (40 s for a release of 1000 objects at 40 ms).
//
// Helm builds the objects it deletes from the release's manifest, then checks each; an object
// it built without a client it takes as owned, unread. So when the uninstall builds exactly
// the objects of the release's manifest that it deletes, they are read at once (a LIST per
// kind of several objects, the GETs of the others, together, getAll), and the client of each
// that Helm's own rule finds the release owns (Owner.Owns) is withheld from Helm until it
// deletes the object (Delete). Every other object (one that is gone, not the release's, or
// whose read failed) keeps its client, and Helm reads and judges it itself, as it would have;
// so does every object when the read fails.
type ownersAhead struct {
	owner Owner
	// objects are the objects Helm's uninstall deletes: those of the manifest, but those
	// its resource policy keeps.
	objects map[objectRef]bool

	mu sync.Mutex
	// read says the objects were read; once only.
	read     bool
	withheld map[objectRef]resource.RESTClient
}

// readOwnersAhead arms c for the uninstall of owner's release, whose objects Helm deletes
// (deletedObjects): the next Build of exactly them reads them at once. It returns the function
// that disarms it.
func (c *contextKubeClient) readOwnersAhead(owner Owner, objects helmkube.ResourceList) func() {
	a := &ownersAhead{owner: owner, objects: make(map[objectRef]bool, len(objects)), withheld: map[objectRef]resource.RESTClient{}}
	for _, info := range objects {
		a.objects[refOf(info)] = true
	}
	c.owners = a
	return func() { c.owners = nil }
}

// Build is Helm's, and, armed for an uninstall (readOwnersAhead), reads the owners of the
// objects it deletes at once.
func (c *contextKubeClient) Build(reader io.Reader, validate bool) (helmkube.ResourceList, error) {
	infos, err := c.Client.Build(reader, validate)
	if err != nil || validate || c.owners == nil {
		return infos, err
	}
	c.owners.vouch(c.ctx, c.waiter.deletionReader(), infos)
	return infos, nil
}

// Delete is Helm's, with the clients withheld for its ownership check given back first. An
// object still without a client is refused, deleting nothing: the uninstall then stays
// unfinished, and the next destroy resumes it.
func (c *contextKubeClient) Delete(resources helmkube.ResourceList, policy metav1.DeletionPropagation) (*helmkube.Result, []error) {
	if c.owners != nil {
		c.owners.giveBack(resources)
	}
	for _, info := range resources {
		if info.Client == nil {
			return &helmkube.Result{}, []error{fmt.Errorf("delete %s %s/%s: no client to delete it with", refOf(info).Kind, info.Namespace, info.Name)}
		}
	}
	return c.Client.Delete(resources, policy)
}

// vouch reads infos when they are exactly the objects the uninstall deletes, the first time,
// and withholds the client of each the release owns.
func (a *ownersAhead) vouch(ctx context.Context, reader objectGetter, infos helmkube.ResourceList) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.read || !a.deletes(infos) {
		return
	}
	a.read = true
	refs := refsOf(infos)
	live, err := getAll(ctx, reader, refs, readsAtOnce)
	if err != nil {
		return
	}
	for i, obj := range live {
		if obj != nil && infos[i].Client != nil && a.owner.Owns(obj.Object) {
			a.withheld[refs[i]] = infos[i].Client
			infos[i].Client = nil
		}
	}
}

// deletes reports whether infos are the objects the uninstall deletes, each once.
func (a *ownersAhead) deletes(infos helmkube.ResourceList) bool {
	if len(infos) != len(a.objects) {
		return false
	}
	seen := make(map[objectRef]bool, len(infos))
	for _, info := range infos {
		ref := refOf(info)
		if !a.objects[ref] || seen[ref] {
			return false
		}
		seen[ref] = true
	}
	return true
}

// giveBack gives each object of resources whose client was withheld its client again.
func (a *ownersAhead) giveBack(resources helmkube.ResourceList) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, info := range resources {
		if info.Client != nil {
			continue
		}
		if client, ok := a.withheld[refOf(info)]; ok {
			info.Client = client
		}
	}
}
