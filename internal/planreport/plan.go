package planreport

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Resource types whose manifests the report shows.
const (
	releaseType     = "gitlabk8s_release"
	environmentType = "gitlabk8s_environment"
)

// planJSON is the part of `terraform show -json`'s output the report reads.
// Every other field, and every attribute but manifests, is dropped by the
// decoder and never held.
type planJSON struct {
	FormatVersion   string           `json:"format_version"`
	ResourceChanges []resourceChange `json:"resource_changes"`
}

type resourceChange struct {
	Address string `json:"address"`
	Mode    string `json:"mode"`
	Type    string `json:"type"`
	Name    string `json:"name"`
	Change  struct {
		Actions         []string          `json:"actions"`
		Before          *manifestsOnly    `json:"before"`
		After           *manifestsOnly    `json:"after"`
		AfterUnknown    marks             `json:"after_unknown"`
		BeforeSensitive marks             `json:"before_sensitive"`
		AfterSensitive  marks             `json:"after_sensitive"`
		ReplacePaths    []json.RawMessage `json:"replace_paths"`
	} `json:"change"`
}

// manifestsOnly is a resource's values with manifests alone kept.
type manifestsOnly struct {
	Manifests map[string]string `json:"manifests"`
}

// marks is after_unknown, before_sensitive or after_sensitive as far as
// manifests goes: all for the whole map, else the entries marked. The JSON is
// a bool for the whole value (false for a value that is absent or has nothing
// marked), or an object whose manifests is a bool or a map of entries; the
// rest of it is not kept.
type marks struct {
	all  bool
	keys map[string]bool
}

func (m *marks) UnmarshalJSON(data []byte) error {
	*m = marks{}
	if json.Unmarshal(data, &m.all) == nil {
		return nil
	}
	var value struct {
		Manifests json.RawMessage `json:"manifests"`
	}
	if err := json.Unmarshal(data, &value); err != nil || len(value.Manifests) == 0 {
		// Not an object, or nothing of manifests marked.
		m.all = err != nil
		return nil
	}
	if json.Unmarshal(value.Manifests, &m.all) == nil || json.Unmarshal(value.Manifests, &m.keys) == nil {
		return nil
	}
	// Any other shape is taken as marked whole: showing nothing is safe.
	m.all = true
	return nil
}

// Plan is what the report shows of one saved plan.
type Plan struct {
	// Resources are the gitlabk8s environments and releases, in the plan's
	// order (Terraform sorts by address).
	Resources []Resource
	// Others are the other managed resources the plan changes, by address;
	// nothing but the address and the action is read of them.
	Others []Other
}

// Other is a resource of another type that the plan changes.
type Other struct {
	Address string
	Action  Action
}

// Parse reads the JSON of `terraform show -json <saved plan>` (Terraform or
// OpenTofu).
func Parse(r io.Reader) (Plan, error) {
	var doc planJSON
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return Plan{}, fmt.Errorf("read the plan's JSON (the output of terraform show -json <plan file>): %w", err)
	}
	if doc.FormatVersion == "" {
		return Plan{}, fmt.Errorf("the JSON has no format_version: it is not the output of terraform show -json <plan file>")
	}
	var plan Plan
	for _, rc := range doc.ResourceChanges {
		if rc.Mode != "managed" {
			continue
		}
		action := actionOf(rc.Change.Actions)
		switch rc.Type {
		case releaseType, environmentType:
			plan.Resources = append(plan.Resources, resourceOf(rc, action))
		default:
			if action != ActionNoop {
				plan.Others = append(plan.Others, Other{Address: rc.Address, Action: action})
			}
		}
	}
	return plan, nil
}

func resourceOf(rc resourceChange, action Action) Resource {
	res := Resource{
		Address:     rc.Address,
		Name:        rc.Name,
		Environment: rc.Type == environmentType,
		Action:      action,
		ForcedBy:    replaceAttributes(rc.Change.ReplacePaths),
	}
	var before, after map[string]string
	if rc.Change.Before != nil {
		before = rc.Change.Before.Manifests
	}
	if rc.Change.After != nil {
		after = rc.Change.After.Manifests
	}
	unknownAll, unknown := rc.Change.AfterUnknown.all, rc.Change.AfterUnknown.keys
	if unknownAll && action != ActionDelete {
		res.ObjectsUnknown = true
		return res
	}
	beforeHiddenAll, beforeHidden := rc.Change.BeforeSensitive.all, rc.Change.BeforeSensitive.keys
	afterHiddenAll, afterHidden := rc.Change.AfterSensitive.all, rc.Change.AfterSensitive.keys
	res.Objects = compareObjects(before, withoutUnknown(after, unknown), objectMarks{
		unknown:   unknown,
		hiddenAll: beforeHiddenAll || afterHiddenAll,
		hidden:    union(beforeHidden, afterHidden),
	})
	return res
}

// replaceAttributes names the top-level attributes of replace_paths. Deeper
// steps are map keys or indexes, which are values: they are not read.
func replaceAttributes(paths []json.RawMessage) []string {
	var names []string
	for _, raw := range paths {
		var steps []json.RawMessage
		if json.Unmarshal(raw, &steps) != nil || len(steps) == 0 {
			continue
		}
		var name string
		if json.Unmarshal(steps[0], &name) == nil && name != "" && !contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// withoutUnknown drops the entries the plan knows only after the apply,
// whatever placeholder the JSON holds for them.
func withoutUnknown(after map[string]string, unknown map[string]bool) map[string]string {
	out := make(map[string]string, len(after))
	for key, text := range after {
		if !unknown[key] {
			out[key] = text
		}
	}
	return out
}

func union(a, b map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k, v := range a {
		out[k] = out[k] || v
	}
	for k, v := range b {
		out[k] = out[k] || v
	}
	return out
}

// Action is what the plan does to a resource, in Terraform's words.
type Action string

const (
	ActionNoop    Action = "no-op"
	ActionCreate  Action = "create"
	ActionUpdate  Action = "update"
	ActionDelete  Action = "delete"
	ActionReplace Action = "replace"
	ActionRead    Action = "read"
	ActionForget  Action = "forget"
)

func actionOf(actions []string) Action {
	switch strings.Join(actions, ",") {
	case "create":
		return ActionCreate
	case "update":
		return ActionUpdate
	case "delete":
		return ActionDelete
	case "delete,create", "create,delete":
		return ActionReplace
	case "read":
		return ActionRead
	case "forget":
		return ActionForget
	default:
		return ActionNoop
	}
}

// phrase is the plan's own wording of an action ("will be updated in-place").
func (a Action) phrase() string {
	switch a {
	case ActionCreate:
		return "will be created"
	case ActionUpdate:
		return "will be updated in-place"
	case ActionDelete:
		return "will be destroyed"
	case ActionReplace:
		return "must be replaced"
	case ActionRead:
		return "will be read during apply"
	case ActionForget:
		return "will no longer be managed by Terraform"
	default:
		return "has no changes"
	}
}
