package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/action"
	helmkube "helm.sh/helm/v4/pkg/kube"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// uninstallUnfinished is the description of a release whose uninstall left objects behind:
// its records stay, with the newest revision uninstalling, so that the next destroy (or apply)
// finds the release and finishes the job.
const uninstallUnfinished = "Uninstall unfinished, objects remain: %s"

// Kept is an object of a release's last revision that its uninstall leaves in place, as its
// helm.sh/resource-policy: keep annotation asks (Helm's CLI lists them after an uninstall).
// Namespace is empty for a cluster-scoped object.
type Kept struct {
	Kind, Namespace, Name string
}

// Uninstall removes the release and waits until its objects are gone (with foreground
// cascading, what they owned too), and returns the objects it kept by their resource policy.
// A release that does not exist is not an error.
func (c *Client) Uninstall(ctx context.Context, namespace, name string, timeout time.Duration, cascade Cascade) ([]Kept, error) {
	return c.uninstallKeeping(c.configuration(ctx, namespace, nil), name, timeout, cascade, false)
}

// uninstall is uninstallKeeping without the objects kept, for the uninstalls that undo an
// install or a pending one.
func (c *Client) uninstall(cfg *action.Configuration, name string, timeout time.Duration, cascade Cascade, disableHooks bool) error {
	_, err := c.uninstallKeeping(cfg, name, timeout, cascade, disableHooks)
	return err
}

// uninstallKeeping removes the release's objects and only then its records. Helm's uninstall purges
// the records even when it could not read an object's owner (it skips the object) or an object
// outlived the wait, which would leave objects that no record names any more. So Helm runs with
// KeepHistory, every object of the recorded manifest it left is deleted here, and the records
// are purged once all are gone; otherwise they stay, and the next run resumes. The objects the
// resource policy keeps are returned once the uninstall is done.
func (c *Client) uninstallKeeping(cfg *action.Configuration, name string, timeout time.Duration, cascade Cascade, disableHooks bool) ([]Kept, error) {
	deadline := time.Now().Add(timeout)
	last, err := lastRelease(cfg.Releases, name)
	if err != nil || last == nil {
		return nil, err
	}
	// The objects Helm's uninstall deletes, built once: for the read of their owners before
	// it, and for what is deleted of them after it (Helm leaves the manifest as it was).
	objects, kept, buildErr := deletedObjects(cfg.KubeClient, last)
	var helmErr error
	if last.Info.Status != rcommon.StatusUninstalled {
		disarm := func() {}
		if kc, ok := cfg.KubeClient.(*contextKubeClient); ok && buildErr == nil {
			disarm = kc.readOwnersAhead(Owner{Namespace: last.Namespace, Name: last.Name}, objects)
		}
		helmErr = runUninstall(cfg, name, timeout, cascade, disableHooks)
		disarm()
		if last, err = lastRelease(cfg.Releases, name); err != nil || last == nil {
			return nil, errors.Join(helmErr, err)
		}
		if helmErr != nil && last.Info.Status != rcommon.StatusUninstalling && last.Info.Status != rcommon.StatusUninstalled {
			// Helm stopped before deleting anything (a pre-delete hook failed): the release
			// stands as it was.
			return nil, fmt.Errorf("uninstall release %s: %w", name, helmErr)
		}
	}
	left, err := []string(nil), buildErr
	if buildErr == nil {
		left, err = c.removeWhatUninstallLeft(cfg.KubeClient, last, objects, time.Until(deadline), cascade)
	}
	if err != nil || helmErr != nil {
		c.keepUnfinished(cfg, last, left)
		return nil, fmt.Errorf("uninstall release %s: %w", name, errors.Join(helmErr, err))
	}
	return kept, purgeRecords(cfg, name)
}

// runUninstall is Helm's uninstall, keeping the records; the provider's waiter waits for the
// deletions.
func runUninstall(cfg *action.Configuration, name string, timeout time.Duration, cascade Cascade, disableHooks bool) error {
	uninstall := action.NewUninstall(cfg)
	uninstall.KeepHistory = true
	uninstall.IgnoreNotFound = true
	// Deletions are always waited for; the strategy only has Helm ask the kube client for
	// its waiter, which is the provider's.
	uninstall.WaitStrategy = helmkube.StatusWatcherStrategy
	uninstall.Timeout = timeout
	uninstall.DisableHooks = disableHooks
	uninstall.DeletionPropagation = string(cascade)
	_, err := uninstall.Run(name)
	return err
}

// deletedObjects are the objects of rel's manifest an uninstall deletes: all but those whose
// resource policy keeps them, as Helm does, which are returned as kept.
func deletedObjects(client helmkube.Interface, rel *release.Release) (helmkube.ResourceList, []Kept, error) {
	infos, err := client.Build(strings.NewReader(rel.Manifest), false)
	if err != nil {
		return nil, nil, fmt.Errorf("read the manifest of revision %d: %w", rel.Version, err)
	}
	var objects helmkube.ResourceList
	var kept []Kept
	for _, info := range infos {
		if !keptByPolicy(info.Object) {
			objects = append(objects, info)
			continue
		}
		k := Kept{Kind: info.Object.GetObjectKind().GroupVersionKind().Kind, Name: info.Name}
		if info.Namespaced() {
			k.Namespace = info.Namespace
		}
		kept = append(kept, k)
	}
	return objects, kept, nil
}

// removeWhatUninstallLeft deletes the objects of rel's manifest (objects, deletedObjects) that
// still exist and that Helm applied for this release, and waits until none is left. It returns
// the keys of the objects still there when it fails. Transient faults of each request are
// ridden out by the clients' retries.
func (c *Client) removeWhatUninstallLeft(client helmkube.Interface, rel *release.Release, objects helmkube.ResourceList, timeout time.Duration, cascade Cascade) ([]string, error) {
	if len(objects) == 0 {
		return nil, nil
	}
	kc, ok := client.(*contextKubeClient)
	if !ok {
		return nil, fmt.Errorf("read what is left of the release's objects: unexpected kube client %T", client)
	}
	refs := refsOf(objects)
	w := kc.waiter
	live, err := getAll(kc.ctx, w.deletionReader(), refs, pollReadsAtOnce)
	if err != nil {
		return keysOf(refs, rel.Namespace), fmt.Errorf("read what is left of the release's objects: %w", err)
	}
	var remove, remaining helmkube.ResourceList
	for i, obj := range live {
		if obj == nil || !ownedByRelease(obj, rel) {
			continue
		}
		remaining = append(remaining, objects[i])
		if obj.GetDeletionTimestamp() == nil {
			remove = append(remove, objects[i])
		}
	}
	if len(remaining) == 0 {
		return nil, nil
	}
	left := keysOf(refsOf(remaining), rel.Namespace)
	if len(remove) > 0 {
		c.logf("release %s/%s: deleting %s, left by the uninstall", rel.Namespace, rel.Name, strings.Join(keysOf(refsOf(remove), rel.Namespace), ", "))
		if _, errs := kc.Delete(remove, cascade.propagation()); len(errs) > 0 {
			return left, fmt.Errorf("delete objects the uninstall left: %w", errors.Join(errs...))
		}
	}
	if timeout <= 0 {
		timeout = time.Second
	}
	if err := w.waitDeleted(kc.ctx, refsOf(remaining), timeout); err != nil {
		return left, err
	}
	return nil, nil
}

// propagation is the API server's propagation policy of the cascade.
func (c Cascade) propagation() metav1.DeletionPropagation {
	switch c {
	case CascadeForeground:
		return metav1.DeletePropagationForeground
	case CascadeOrphan:
		return metav1.DeletePropagationOrphan
	}
	return metav1.DeletePropagationBackground
}

// keptByPolicy says whether the manifest's object asks Helm to keep it on uninstall.
func keptByPolicy(obj any) bool {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return false
	}
	policy := u.GetAnnotations()[helmkube.ResourcePolicyAnno]
	return strings.ToLower(strings.TrimSpace(policy)) == helmkube.KeepPolicy
}

// ownedByRelease says whether the live object is rel's by the rule Helm's uninstall judges
// with (Owner.Owns): an object someone else took over, or one that names rel but lacks Helm's
// label, Helm's uninstall leaves, and so does the provider.
func ownedByRelease(obj *unstructured.Unstructured, rel *release.Release) bool {
	return Owner{Namespace: rel.Namespace, Name: rel.Name}.Owns(obj.Object)
}

func keysOf(refs []objectRef, namespace string) []string {
	keys := make([]string, len(refs))
	for i, ref := range refs {
		keys[i] = ref.key(namespace)
	}
	return keys
}

// keepUnfinished records that the uninstall of rel did not finish, so that the release's
// records stay and the next destroy or apply reads it as pending and resumes.
func (c *Client) keepUnfinished(cfg *action.Configuration, rel *release.Release, left []string) {
	what := "unknown"
	if len(left) > 0 {
		what = strings.Join(left, ", ")
	}
	rel.SetStatus(rcommon.StatusUninstalling, fmt.Sprintf(uninstallUnfinished, what))
	if err := cfg.Releases.Update(rel); err != nil {
		c.logf("release %s/%s: could not record the unfinished uninstall of revision %d: %v", rel.Namespace, rel.Name, rel.Version, err)
	}
}

// purgeRecords deletes every record of the release, oldest first, so that an interrupted purge
// leaves the newest revision, which names the release's state.
func purgeRecords(cfg *action.Configuration, name string) error {
	history, err := releaseHistory(cfg.Releases, name)
	if err != nil {
		return fmt.Errorf("uninstall release %s: read its records: %w", name, err)
	}
	slices.SortFunc(history, func(a, b *release.Release) int { return a.Version - b.Version })
	for _, r := range history {
		if _, err := cfg.Releases.Delete(r.Name, r.Version); err != nil {
			return fmt.Errorf("uninstall release %s: delete the record of revision %d: %w", name, r.Version, err)
		}
	}
	return nil
}
