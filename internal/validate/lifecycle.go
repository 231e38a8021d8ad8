package validate

import (
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/version"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// Lifecycle is what Kubernetes says about when an API version of a kind is served.
type Lifecycle struct {
	// Introduced, Deprecated and Removed are the Kubernetes versions in which the API version
	// of the kind was introduced, deprecated and stopped being served; zero when Kubernetes
	// does not say (a GA version is never deprecated by default).
	Introduced, Deprecated, Removed Version
	// Replacement is the API version and kind to use instead ("apps/v1 Deployment"); empty
	// when Kubernetes names none.
	Replacement string
	// Unlisted is set for a kind of a built-in API group that the Kubernetes libraries the
	// provider is built with no longer hold (policy/v1beta1 PodSecurityPolicy). Kubernetes
	// deletes a type from k8s.io/api only after it stopped being served, so it is not served by
	// Removed, the bound unlistedRemoval gives, and may have stopped earlier.
	Unlisted bool
}

// The methods Kubernetes generates into prerelease API types (k8s:prerelease-lifecycle-gen).
type (
	lifecycleIntroduced interface{ APILifecycleIntroduced() (major, minor int) }
	lifecycleDeprecated interface{ APILifecycleDeprecated() (major, minor int) }
	lifecycleRemoved    interface{ APILifecycleRemoved() (major, minor int) }
	lifecycleReplaced   interface {
		APILifecycleReplacement() schema.GroupVersionKind
	}
)

// builtinScheme holds every built-in kind: client-go's scheme (all of k8s.io/api) and the
// CustomResourceDefinition API, which is built in but lives in apiextensions-apiserver.
var builtinScheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(apiextensionsv1beta1.AddToScheme(s))
	return s
})

// builtinGroups are the API groups of the built-in kinds, the core group "" included.
var builtinGroups = sync.OnceValue(func() map[string]bool {
	groups := map[string]bool{"": true}
	for gvk := range builtinScheme().AllKnownTypes() {
		groups[gvk.Group] = true
	}
	return groups
})

// LibraryVersion is the Kubernetes version of the k8s.io/api module the provider is built
// with: the newest version whose API lifecycles it knows.
var LibraryVersion = sync.OnceValue(func() Version {
	newest := Version{}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path != "k8s.io/api" {
				continue
			}
			// k8s.io/api v0.N.x is Kubernetes 1.N.
			if v, err := ParseVersion(strings.TrimPrefix(dep.Version, "v0.")); err == nil {
				newest = Version{Major: 1, Minor: v.Major}
			}
		}
	}
	for _, t := range builtinScheme().AllKnownTypes() {
		if lc, ok := reflect.New(t).Interface().(lifecycleIntroduced); ok {
			if v := versionOf(lc.APILifecycleIntroduced()); v.AtLeast(newest) {
				newest = v
			}
		}
	}
	return newest
})

func versionOf(major, minor int) Version { return Version{Major: major, Minor: minor} }

// LifecycleOf returns the lifecycle of apiVersion and kind. The second result is false for
// kinds that are not built in (custom resources).
func LifecycleOf(apiVersion, kind string) (Lifecycle, bool) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || !builtinGroups()[gv.Group] {
		return Lifecycle{}, false
	}
	gvk := gv.WithKind(kind)
	t, ok := builtinScheme().AllKnownTypes()[gvk]
	if !ok {
		return Lifecycle{Removed: unlistedRemoval(gv), Replacement: replacementOf(gvk), Unlisted: true}, true
	}
	obj := reflect.New(t).Interface()
	var lc Lifecycle
	if i, ok := obj.(lifecycleIntroduced); ok {
		lc.Introduced = versionOf(i.APILifecycleIntroduced())
	}
	if d, ok := obj.(lifecycleDeprecated); ok {
		lc.Deprecated = versionOf(d.APILifecycleDeprecated())
	}
	if r, ok := obj.(lifecycleRemoved); ok {
		lc.Removed = versionOf(r.APILifecycleRemoved())
	}
	if r, ok := obj.(lifecycleReplaced); ok {
		if repl := r.APILifecycleReplacement(); !repl.Empty() {
			// networking.k8s.io/v1beta1 IngressClass is tagged with its list as replacement.
			if repl.Kind == kind+"List" {
				repl.Kind = kind
			}
			lc.Replacement = describeGVK(repl)
		}
	}
	return lc, true
}

// unlistedRemoval bounds when a kind the libraries no longer hold in gv stopped being
// served: when the libraries still hold other kinds of gv, the latest of their removals (the
// group version went away with them: policy/v1beta1 PodSecurityPolicy, with policy/v1beta1
// PodDisruptionBudget in 1.25); otherwise the libraries' own version.
func unlistedRemoval(gv schema.GroupVersion) Version {
	var latest Version
	for known, t := range builtinScheme().AllKnownTypes() {
		if known.GroupVersion() != gv {
			continue
		}
		if _, prerelease := reflect.New(t).Interface().(lifecycleRemoved); !prerelease {
			continue // the options and status kinds every group version registers
		}
		lc, _ := LifecycleOf(gv.String(), known.Kind)
		if lc.Removed.IsZero() {
			// A sibling that is still served says nothing about when this kind went away.
			return LibraryVersion()
		}
		if lc.Removed.AtLeast(latest) {
			latest = lc.Removed
		}
	}
	if latest.IsZero() {
		return LibraryVersion()
	}
	return latest
}

// replacementOf names the preferred served version of gvk's kind in its group, for a kind
// the libraries no longer hold in gvk's version; empty when the group has no such kind.
func replacementOf(gvk schema.GroupVersionKind) string {
	var candidates []schema.GroupVersionKind
	for known := range builtinScheme().AllKnownTypes() {
		if known.Group == gvk.Group && known.Kind == gvk.Kind && known.Version != runtime.APIVersionInternal {
			candidates = append(candidates, known)
		}
	}
	// The most stable version first: v1 before v1beta1 before v1alpha1.
	slices.SortFunc(candidates, func(a, b schema.GroupVersionKind) int {
		return -version.CompareKubeAwareVersionStrings(a.Version, b.Version)
	})
	for _, candidate := range candidates {
		if lc, _ := LifecycleOf(candidate.GroupVersion().String(), candidate.Kind); lc.Removed.IsZero() {
			return describeGVK(candidate)
		}
	}
	return ""
}

func describeGVK(gvk schema.GroupVersionKind) string {
	return gvk.GroupVersion().String() + " " + gvk.Kind
}

// problemAt says what is wrong with the API version at target, if anything.
func (lc Lifecycle) problemAt(target Version) Problem {
	switch {
	case lc.Unlisted && target.AtLeast(lc.Removed):
		return RemovedAPI
	case lc.Unlisted:
		return DeprecatedAPI
	case !lc.Removed.IsZero() && target.AtLeast(lc.Removed):
		return RemovedAPI
	case !lc.Introduced.IsZero() && !target.AtLeast(lc.Introduced):
		return NotYetServedAPI
	case !lc.Deprecated.IsZero() && target.AtLeast(lc.Deprecated):
		return DeprecatedAPI
	}
	return ""
}
