package planreport

import (
	"slices"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// Resource is one gitlabk8s_release or gitlabk8s_environment of the plan.
type Resource struct {
	Address string
	// Name is the resource's name in the configuration ("app" of
	// gitlabk8s_release.app).
	Name        string
	Environment bool
	Action      Action
	// ForcedBy names the attributes that force a replacement.
	ForcedBy []string
	// Objects are the objects that change, removed first, then changed,
	// then added, each by key.
	Objects []Object
	// ObjectsUnknown: the plan knows the objects only after the apply.
	ObjectsUnknown bool
}

// ObjectChange is what the plan does to one Kubernetes object.
type ObjectChange int

// Ordered as the report lists them: what cannot be undone first.
const (
	ObjectRemoved ObjectChange = iota
	ObjectChanged
	ObjectAdded
)

func (c ObjectChange) word() string {
	switch c {
	case ObjectRemoved:
		return "removed"
	case ObjectAdded:
		return "added"
	default:
		return "changed"
	}
}

// Object is one Kubernetes object that changes.
type Object struct {
	// Key is the manifests' key, e.g. "Deployment.apps/web".
	Key    string
	Change ObjectChange
	// Before and After are the manifests; empty on the side that is absent.
	Before, After string
	// Unknown: the new manifest is known after the apply.
	Unknown bool
	// Sensitive: the plan marks the manifest sensitive; it is not shown.
	Sensitive bool
}

type objectMarks struct {
	unknown   map[string]bool
	hiddenAll bool
	hidden    map[string]bool
}

// compareObjects lists the objects that differ between two manifests maps,
// as manifest.DiffManifests tells them apart, plus those whose new manifest
// is unknown.
func compareObjects(before, after map[string]string, marks objectMarks) []Object {
	var objects []Object
	for _, change := range manifest.DiffManifests(before, after) {
		obj := Object{Key: change.Key, Before: before[change.Key], After: after[change.Key]}
		switch change.Action {
		case manifest.ActionAdd:
			obj.Change = ObjectAdded
		case manifest.ActionDelete:
			obj.Change = ObjectRemoved
			if marks.unknown[change.Key] {
				// Not removed: the plan knows its manifest only after the apply.
				obj.Change, obj.Unknown = ObjectChanged, true
			}
		default:
			obj.Change = ObjectChanged
		}
		objects = append(objects, obj)
	}
	for key, unknown := range marks.unknown {
		if _, known := after[key]; unknown && !known {
			if _, existed := before[key]; !existed {
				objects = append(objects, Object{Key: key, Change: ObjectAdded, Unknown: true})
			}
		}
	}
	for i := range objects {
		if marks.hiddenAll || marks.hidden[objects[i].Key] {
			objects[i].Sensitive = true
			objects[i].Before, objects[i].After = "", ""
		}
	}
	slices.SortFunc(objects, func(a, b Object) int {
		if a.Change != b.Change {
			return int(a.Change - b.Change)
		}
		if a.Key < b.Key {
			return -1
		}
		if a.Key > b.Key {
			return 1
		}
		return 0
	})
	return objects
}

// counts returns how many objects of each change.
func counts(objects []Object) map[ObjectChange]int {
	out := map[ObjectChange]int{}
	for _, o := range objects {
		out[o.Change]++
	}
	return out
}
