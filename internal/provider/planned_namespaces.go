package provider

import (
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
)

// plannedNamespaces hands the Pod Security level an environment's plan gives its namespace to
// the plans of the releases in it (release.Inputs.PodSecurity), which Terraform makes after it,
// in the same process, when a release's namespace is the environment's.
type plannedNamespaces struct {
	mu sync.Mutex
	// enforce holds, by namespace, the planned value of the enforce label; nil when the plan
	// removes the label.
	enforce map[string]*string
}

// put records what the environment's plan does to namespace's enforce label, given its labels
// in its state (nil for an environment the apply creates) and in its plan. A plan that leaves
// the label as it was, or creates an environment without it, records nothing: the
// namespace's own label stands, whoever set it.
func (p *plannedNamespaces) put(namespace string, state *types.Map, plan types.Map) {
	planned, known := enforceLabelOf(plan)
	if !known {
		return
	}
	if state == nil && planned == nil {
		return
	}
	if state != nil {
		if was, ok := enforceLabelOf(*state); ok && equalLabel(was, planned) {
			return
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.enforce == nil {
		p.enforce = map[string]*string{}
	}
	p.enforce[namespace] = planned
}

// get returns the level the environment's plan sets on namespace, nil when it sets none.
func (p *plannedNamespaces) get(namespace string) *release.PlannedLevel {
	p.mu.Lock()
	defer p.mu.Unlock()
	planned, ok := p.enforce[namespace]
	if !ok {
		return nil
	}
	if planned == nil {
		return &release.PlannedLevel{}
	}
	return &release.PlannedLevel{Enforce: *planned}
}

// enforceLabelOf returns the enforce label in an environment's labels, nil when they do not
// hold it, and whether that is known.
func enforceLabelOf(labels types.Map) (*string, bool) {
	if labels.IsUnknown() {
		return nil, false
	}
	v, ok := labels.Elements()[release.PodSecurityEnforceLabel]
	if !ok {
		return nil, true
	}
	s, isString := v.(types.String)
	if !isString || s.IsUnknown() {
		return nil, false
	}
	if s.IsNull() {
		return nil, true
	}
	level := s.ValueString()
	return &level, true
}

func equalLabel(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}
