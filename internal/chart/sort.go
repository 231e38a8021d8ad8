package chart

import (
	"maps"
	"slices"
	"sort"

	release "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/parallel"
)

// sortManifests is Helm's releaseutil.SortManifests of files in InstallOrder, with the
// templates' documents read on every core: Helm parses each one to tell hooks from objects,
// a sixth of a 1000-object rendering's time, and a chart often writes its objects from one
// template. Helm reads the files in the order of their paths and each file's documents in
// order, keeps hooks and objects in that order, then sorts both by kind, stably. Here each
// document is handed to Helm's SortManifests alone, under its file's path, and their results
// are put back in that order and sorted as Helm sorts them, so the result is Helm's to the item.
// The error is the first document's that has one, as Helm stops at the first.
func sortManifests(files map[string]string) ([]*release.Hook, []releaseutil.Manifest, error) {
	type document struct{ path, text string }
	var docs []document
	for _, path := range slices.Sorted(maps.Keys(files)) {
		split := releaseutil.SplitManifests(files[path])
		keys := slices.Collect(maps.Keys(split))
		sort.Sort(releaseutil.BySplitManifestsOrder(keys))
		for _, key := range keys {
			docs = append(docs, document{path: path, text: split[key]})
		}
	}
	type sorted struct {
		hooks     []*release.Hook
		manifests []releaseutil.Manifest
		err       error
	}
	each := make([]sorted, len(docs))
	parallel.Chunks(len(docs), func(start, end int) {
		for i := start; i < end; i++ {
			hooks, manifests, err := releaseutil.SortManifests(map[string]string{docs[i].path: docs[i].text}, nil, releaseutil.InstallOrder)
			each[i] = sorted{hooks: hooks, manifests: manifests, err: err}
		}
	})
	var hooks []*release.Hook
	var manifests []releaseutil.Manifest
	for _, s := range each {
		if s.err != nil {
			return nil, nil, s.err
		}
		hooks, manifests = append(hooks, s.hooks...), append(manifests, s.manifests...)
	}
	sort.SliceStable(hooks, func(i, j int) bool { return installsBefore(hooks[i].Kind, hooks[j].Kind) })
	sort.SliceStable(manifests, func(i, j int) bool {
		return installsBefore(manifests[i].Head.Kind, manifests[j].Head.Kind)
	})
	return hooks, manifests, nil
}

// installRank is each kind's place in Helm's InstallOrder, the last place where a kind is listed
// twice, as Helm ranks them.
var installRank = func() map[string]int {
	rank := make(map[string]int, len(releaseutil.InstallOrder))
	for i, kind := range releaseutil.InstallOrder {
		rank[kind] = i
	}
	return rank
}()

// installsBefore is Helm's order of kinds (releaseutil's lessByKind over InstallOrder): kinds
// it ranks by their rank, before every kind it does not know, which go by name.
func installsBefore(a, b string) bool {
	rankA, knownA := installRank[a]
	rankB, knownB := installRank[b]
	switch {
	case !knownA && !knownB:
		return a < b
	case !knownA:
		return false
	case !knownB:
		return true
	}
	return rankA < rankB
}
