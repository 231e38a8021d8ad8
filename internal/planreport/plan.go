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
		AfterUnknown    *manifestsMarks   `json:"after_unknown"`
		BeforeSensitive *manifestsMarks   `json:"before_sensitive"`
		AfterSensitive  *manifestsMarks   `json:"after_sensitive"`
		ReplacePaths    []json.RawMessage `json:"replace_paths"`
	} `json:"change"`
}

// manifestsOnly is a resource's values with manifests alone kept.
type manifestsOnly struct {
	Manifests map[string]string `json:"manifests"`
}

// manifestsMarks is after_unknown or *_sensitive with manifests alone kept:
// true for the whole map, or a map of entries marked true.
type manifestsMarks struct {
	Manifests json.RawMessage `json:"manifests"`
}

// marks reads which entries are marked: all for the whole map.
func (m *manifestsMarks) marks() (all bool, keys map[string]bool) {
	if m == nil || len(m.Manifests) == 0 {
		return false, nil
	}
	if err := json.Unmarshal(m.Manifests, &all); err == nil {
		return all, nil
	}
	var byKey map[string]bool
	if err := json.Unmarshal(m.Manifests, &byKey); err == nil {
		return false, byKey
	}
	// Any other shape is taken as marked whole: showing nothing is safe.
	return true, nil
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
	unknownAll, unknown := rc.Change.AfterUnknown.marks()
	if unknownAll && action != ActionDelete {
		res.ObjectsUnknown = true
		return res
	}
	beforeHiddenAll, beforeHidden := rc.Change.BeforeSensitive.marks()
	afterHiddenAll, afterHidden := rc.Change.AfterSensitive.marks()
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
