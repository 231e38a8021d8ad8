package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
)

// An environment's plan hands its releases' plans the Pod Security level it sets, only when it
// changes the label: created with it, changed, or removed. A plan that keeps the label, or
// creates the environment without it, leaves the namespace's own label to stand.
func TestPlannedNamespaces_onlyWhatThePlanChanges(t *testing.T) {
	labels := func(level string) types.Map {
		if level == "" {
			return types.MapNull(types.StringType)
		}
		return types.MapValueMust(types.StringType, map[string]attr.Value{release.PodSecurityEnforceLabel: types.StringValue(level), "team": types.StringValue("a")})
	}
	state := func(level string) *types.Map { m := labels(level); return &m }
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
