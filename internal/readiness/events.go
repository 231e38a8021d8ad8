package readiness

import (
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// event is what a rule needs of one core/v1 Event.
type event struct {
	reason, message, fieldPath string
	last                       time.Time
}

// eventIndex holds a namespace's recent events by the object they are about: by UID where the
// object is known, by kind and name for objects outside the release (the claims a
// StatefulSet makes). Each list is newest first.
type eventIndex struct {
	byUID  map[string][]event
	byName map[string][]event // "namespace/Kind/name"
}

// indexEvents keeps the events last seen at or after since (all of them when since is zero),
// so that an earlier rollout's events do not speak for this one.
func indexEvents(events []*unstructured.Unstructured, since time.Time) *eventIndex {
	idx := &eventIndex{byUID: map[string][]event{}, byName: map[string][]event{}}
	for _, obj := range events {
		if obj == nil {
			continue
		}
		e := event{last: eventTime(obj)}
		if !since.IsZero() && e.last.Before(since) {
			continue
		}
		e.reason, _, _ = unstructured.NestedString(obj.Object, "reason")
		e.message, _, _ = unstructured.NestedString(obj.Object, "message")
		involved, _, _ := unstructured.NestedStringMap(obj.Object, "involvedObject")
		e.fieldPath = involved["fieldPath"]
		if uid := involved["uid"]; uid != "" {
			idx.byUID[uid] = append(idx.byUID[uid], e)
		}
		name := involved["namespace"] + "/" + involved["kind"] + "/" + involved["name"]
		idx.byName[name] = append(idx.byName[name], e)
	}
	for _, list := range [](map[string][]event){idx.byUID, idx.byName} {
		for _, events := range list {
			sort.SliceStable(events, func(i, j int) bool { return events[i].last.After(events[j].last) })
		}
	}
	return idx
}

// eventTime is when an event was last seen, in whichever field its reporter filled.
func eventTime(obj *unstructured.Unstructured) time.Time {
	var latest time.Time
	for _, path := range [][]string{{"lastTimestamp"}, {"eventTime"}, {"series", "lastObservedTime"}, {"firstTimestamp"}, {"metadata", "creationTimestamp"}} {
		s, _, _ := unstructured.NestedString(obj.Object, path...)
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil && t.After(latest) {
			latest = t
		}
	}
	return latest
}

// latest returns the newest event about the object with uid, or else about namespace/kind/name,
// whose reason is one of reasons.
func (idx *eventIndex) latest(uid, namespace, kind, name string, reasons ...string) (event, bool) {
	if idx == nil {
		return event{}, false
	}
	events := idx.byUID[uid]
	if uid == "" {
		events = idx.byName[namespace+"/"+kind+"/"+name]
	}
	for _, e := range events {
		for _, r := range reasons {
			if e.reason == r {
				return e, true
			}
		}
	}
	return event{}, false
}

// containerOfFieldPath reads "web" from an event's "spec.containers{web}".
func containerOfFieldPath(fieldPath string) string {
	_, rest, ok := strings.Cut(fieldPath, "{")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "}")
	return name
}
