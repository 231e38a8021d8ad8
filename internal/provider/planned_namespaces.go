package provider

import (
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
)

// plannedNamespaces hands the Pod Security level and policy version an environment's plan gives
// its namespace to the plans of the releases in it (release.Inputs.PodSecurity), which Terraform
// makes after it, in the same process, when a release's namespace is the environment's.
type plannedNamespaces struct {
	mu sync.Mutex
	// levels holds, by namespace, the planned values of the enforce and enforce-version labels.
	levels map[string]release.PlannedLevel
}

// put records what the environment's plan does to namespace's enforce and enforce-version
// labels, given its labels in its state (nil for an environment the apply creates) and in its
// plan. A plan that leaves both as they were, or creates an environment without either, records
// nothing: the namespace's own labels stand, whoever set them.
func (p *plannedNamespaces) put(namespace string, state *types.Map, plan types.Map) {
	planned, known := podSecurityLabelsOf(plan)
	if !known {
		return
	}
	if state == nil && planned == (release.PlannedLevel{}) {
		return
	}
	if state != nil {
		if was, ok := podSecurityLabelsOf(*state); ok && was == planned {
			return
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.levels == nil {
		p.levels = map[string]release.PlannedLevel{}
	}
	p.levels[namespace] = planned
}

// get returns the level the environment's plan sets on namespace, nil when it sets none.
func (p *plannedNamespaces) get(namespace string) *release.PlannedLevel {
	p.mu.Lock()
	defer p.mu.Unlock()
	planned, ok := p.levels[namespace]
	if !ok {
		return nil
	}
	return &planned
}

// podSecurityLabelsOf returns the enforce and enforce-version labels in an environment's labels,
// empty where they do not hold one, and whether both are known.
func podSecurityLabelsOf(labels types.Map) (release.PlannedLevel, bool) {
	if labels.IsUnknown() {
		return release.PlannedLevel{}, false
	}
	enforce, known := labelOf(labels, release.PodSecurityEnforceLabel)
	version, versionKnown := labelOf(labels, release.PodSecurityVersionLabel)
	return release.PlannedLevel{Enforce: enforce, Version: version}, known && versionKnown
}

// labelOf returns the label name in labels, empty when they do not hold it, and whether that
// is known.
func labelOf(labels types.Map, name string) (string, bool) {
	v, ok := labels.Elements()[name]
	if !ok {
		return "", true
	}
	s, isString := v.(types.String)
	if !isString || s.IsUnknown() {
		return "", false
	}
	return s.ValueString(), true
}
