package helmrelease

import (
	"fmt"
	"strings"

	"helm.sh/helm/v4/pkg/action"
	helmkube "helm.sh/helm/v4/pkg/kube"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/resource"
)

// Helm's annotations on every object it applies for a release.
const (
	annotationReleaseName      = "meta.helm.sh/release-name"
	annotationReleaseNamespace = "meta.helm.sh/release-namespace"
)

// failedSinceDeployed returns the failed revisions newer than the newest successful one.
// Helm upgrades from the last successful revision, so objects that only such a failed (or
// interrupted) revision created are in no manifest Helm compares with, and would be left
// behind by the next upgrade. Without a readable history nothing can be known to be stale.
func failedSinceDeployed(cfg *action.Configuration, name string) []*release.Release {
	history, err := releaseHistory(cfg.Releases, name)
	if err != nil {
		return nil
	}
	newestSuccess := 0
	for _, r := range history {
		if (r.Info.Status == rcommon.StatusDeployed || r.Info.Status == rcommon.StatusSuperseded) && r.Version > newestSuccess {
			newestSuccess = r.Version
		}
	}
	var stale []*release.Release
	for _, r := range history {
		if r.Info.Status == rcommon.StatusFailed && r.Version > newestSuccess {
			stale = append(stale, r)
		}
	}
	return stale
}

// removeLeftovers deletes the objects of stale revisions that rel does not list and that
// Helm applied for this release, and returns their descriptions.
func (c *Client) removeLeftovers(cfg *action.Configuration, rel *release.Release, stale []*release.Release) ([]string, error) {
	if len(stale) == 0 {
		return nil, nil
	}
	current, err := cfg.KubeClient.Build(strings.NewReader(rel.Manifest), false)
	if err != nil {
		return nil, fmt.Errorf("read the manifest of revision %d: %w", rel.Version, err)
	}
	seen := map[string]bool{}
	for _, info := range current {
		seen[infoKey(info)] = true
	}
	var remove helmkube.ResourceList
	var names []string
	for _, s := range stale {
		infos, err := cfg.KubeClient.Build(strings.NewReader(s.Manifest), false)
		if err != nil {
			return nil, fmt.Errorf("read the manifest of failed revision %d: %w", s.Version, err)
		}
		for _, info := range infos {
			key := infoKey(info)
			if seen[key] {
				continue
			}
			seen[key] = true
			if !appliedForRelease(info, rel) {
				continue
			}
			remove = append(remove, info)
			names = append(names, refOf(info).key(rel.Namespace))
		}
	}
	if len(remove) == 0 {
		return nil, nil
	}
	c.logf("release %s/%s: deleting %s, left by failed revisions", rel.Namespace, rel.Name, strings.Join(names, ", "))
	if _, errs := cfg.KubeClient.Delete(remove, metav1.DeletePropagationBackground); len(errs) > 0 {
		return names, fmt.Errorf("delete objects left by failed revisions: %w", errs[0])
	}
	return names, nil
}

// appliedForRelease reads the live object of info and reports whether Helm applied it for
// rel; an object that no longer exists is not.
func appliedForRelease(info *resource.Info, rel *release.Release) bool {
	if err := info.Get(); err != nil {
		return false
	}
	accessor, err := meta.Accessor(info.Object)
	if err != nil {
		return false
	}
	annotations := accessor.GetAnnotations()
	return annotations[annotationReleaseName] == rel.Name && annotations[annotationReleaseNamespace] == rel.Namespace
}

func infoKey(info *resource.Info) string {
	gvk := info.Object.GetObjectKind().GroupVersionKind()
	return gvk.GroupKind().String() + "/" + info.Namespace + "/" + info.Name
}
