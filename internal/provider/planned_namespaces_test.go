package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
)

// An environment's plan hands its releases' plans the Pod Security level and policy version it
// sets, only when it changes one of the labels: created with it, changed, or removed. A plan that
// keeps both, or creates the environment without either, leaves the namespace's own to stand.
func TestPlannedNamespaces_onlyWhatThePlanChanges(t *testing.T) {
	labels := func(level string, version ...string) types.Map {
		m := map[string]attr.Value{"team": types.StringValue("a")}
		if level != "" {
			m[release.PodSecurityEnforceLabel] = types.StringValue(level)
		}
		if len(version) > 0 {
			m[release.PodSecurityVersionLabel] = types.StringValue(version[0])
		}
		if len(m) == 1 {
			return types.MapNull(types.StringType)
		}
		return types.MapValueMust(types.StringType, m)
	}
	state := func(level string, version ...string) *types.Map { m := labels(level, version...); return &m }
	for _, tt := range []struct {
		desc  string
		state *types.Map
		plan  types.Map
		want  *release.PlannedLevel
	}{
		{"created with a level", nil, labels("restricted"), &release.PlannedLevel{Enforce: "restricted"}},
		{"created without one", nil, labels(""), nil},
		{"kept", state("baseline"), labels("baseline"), nil},
		{"kept without one", state(""), labels(""), nil},
		{"changed", state("baseline"), labels("privileged"), &release.PlannedLevel{Enforce: "privileged"}},
		{"set", state(""), labels("baseline"), &release.PlannedLevel{Enforce: "baseline"}},
		{"removed", state("baseline"), labels(""), &release.PlannedLevel{}},
		{"created with a version", nil, labels("restricted", "v1.30"), &release.PlannedLevel{Enforce: "restricted", Version: "v1.30"}},
		{"its version pinned", state("restricted"), labels("restricted", "v1.30"), &release.PlannedLevel{Enforce: "restricted", Version: "v1.30"}},
		{"its version changed", state("restricted", "v1.29"), labels("restricted", "latest"), &release.PlannedLevel{Enforce: "restricted", Version: "latest"}},
		{"its version kept", state("restricted", "v1.30"), labels("restricted", "v1.30"), nil},
		{"its version unpinned", state("restricted", "v1.30"), labels("restricted"), &release.PlannedLevel{Enforce: "restricted"}},
		{"the version's value not known yet", state("restricted"), types.MapValueMust(types.StringType, map[string]attr.Value{
			release.PodSecurityEnforceLabel: types.StringValue("restricted"), release.PodSecurityVersionLabel: types.StringUnknown()}), nil},
		{"not known yet", state("baseline"), types.MapUnknown(types.StringType), nil},
		{"its value not known yet", state("baseline"), types.MapValueMust(types.StringType, map[string]attr.Value{release.PodSecurityEnforceLabel: types.StringUnknown()}), nil},
	} {
		var p plannedNamespaces
		p.put("review-1", tt.state, tt.plan)
		got := p.get("review-1")
		if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.desc, got, tt.want)
		}
		if other := p.get("review-2"); other != nil {
			t.Errorf("%s: another namespace gets %+v", tt.desc, other)
		}
	}
}
