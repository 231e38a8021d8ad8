package provider

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/pmezard/go-difflib/difflib"
)

// manifestLines is the expected change of one manifest in a plan: the lines removed and the
// lines added, compared without their indentation. A nil manifestLines means the object is
// added or deleted as a whole.
type manifestLines struct {
	removed, added []string
}

// expectManifestChanges checks that the plan changes exactly the listed entries of the
// `manifests` attribute of address, and within each changed entry exactly the listed lines.
// Every other entry must be unchanged.
func expectManifestChanges(address string, want map[string]*manifestLines) plancheck.PlanCheck {
	return manifestChangesCheck{address: address, want: want}
}

type manifestChangesCheck struct {
	address string
	want    map[string]*manifestLines
}

func (c manifestChangesCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.address {
			continue
		}
		if unknown, _ := rc.Change.AfterUnknown.(map[string]any); unknown["manifests"] == true {
			resp.Error = fmt.Errorf("the plan leaves every manifest of %s unknown", c.address)
			return
		}
		before := planManifestsOf(rc.Change.Before, nil)
		after := planManifestsOf(rc.Change.After, rc.Change.AfterUnknown)
		var problems []string
		keys := map[string]bool{}
		for k := range before {
			keys[k] = true
		}
		for k := range after {
			keys[k] = true
		}
		for k := range keys {
			old, hadOld := before[k]
			updated, hasNew := after[k]
			want, expected := c.want[k]
			switch {
			case hadOld && hasNew && old == updated:
				if expected {
					problems = append(problems, fmt.Sprintf("%s: expected a change, the plan has none", k))
				}
			case !expected:
				problems = append(problems, fmt.Sprintf("%s: unexpected change (before present %v, after present %v)", k, hadOld, hasNew))
			case want == nil:
				if hadOld && hasNew {
					problems = append(problems, fmt.Sprintf("%s: expected an add or a delete, the plan updates it", k))
				}
			default:
				removed, added := manifestChangedLines(old, updated)
				if !slices.Equal(removed, want.removed) || !slices.Equal(added, want.added) {
					problems = append(problems, fmt.Sprintf("%s: removed %q, added %q; want removed %q, added %q", k, removed, added, want.removed, want.added))
				}
			}
		}
		slices.Sort(problems)
		if len(problems) > 0 {
			resp.Error = fmt.Errorf("manifests of %s:\n%s", c.address, strings.Join(problems, "\n"))
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the plan", c.address)
}

// planManifestsOf returns the manifests of a plan's value by key. An entry the plan leaves
// unknown (absent from the value, or not a string) reads as unknownManifest, so that a known
// entry that became unknown counts as a change.
func planManifestsOf(value any, unknown any) map[string]string {
	obj, _ := value.(map[string]any)
	raw, _ := obj["manifests"].(map[string]any)
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if s, ok := v.(string); ok {
			out[k] = s
		} else {
			out[k] = unknownManifest
		}
	}
	unknownObj, _ := unknown.(map[string]any)
	unknownEntries, _ := unknownObj["manifests"].(map[string]any)
	for k, isUnknown := range unknownEntries {
		if b, _ := isUnknown.(bool); b {
			out[k] = unknownManifest
		}
	}
	return out
}

// unknownManifest stands for a manifest the plan leaves unknown.
const unknownManifest = "(known after apply)"

// changedLines returns the removed and added lines of a line diff, without indentation.
func manifestChangedLines(before, after string) (removed, added []string) {
	matcher := difflib.NewMatcher(difflib.SplitLines(before), difflib.SplitLines(after))
	a, b := difflib.SplitLines(before), difflib.SplitLines(after)
	for _, op := range matcher.GetOpCodes() {
		if op.Tag == 'e' {
			continue
		}
		for _, l := range a[op.I1:op.I2] {
			removed = append(removed, strings.TrimSpace(l))
		}
		for _, l := range b[op.J1:op.J2] {
			added = append(added, strings.TrimSpace(l))
		}
	}
	return removed, added
}

// tfjsonpathManifest addresses one entry of `manifests`.
func tfjsonpathManifest(key string) tfjsonpath.Path {
	return tfjsonpath.New("manifests").AtMapKey(key)
}

// knownStringContaining checks a known string value contains s.
func knownStringContaining(s string) knownvalue.Check {
	return knownvalue.StringRegexp(regexp.MustCompile(regexp.QuoteMeta(s)))
}

// An entry that was known and the plan leaves unknown is a change, not an unchanged entry.
func TestManifestChangesCheck_unknownEntryIsAChange(t *testing.T) {
	const address = "gitlabk8s_release.web"
	plan := &tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{{Address: address, Change: &tfjson.Change{
		Before:       map[string]any{"manifests": map[string]any{"ConfigMap/a": "a: 1\n", "Secret/b": "b: 1\n"}},
		After:        map[string]any{"manifests": map[string]any{"ConfigMap/a": "a: 1\n"}},
		AfterUnknown: map[string]any{"manifests": map[string]any{"Secret/b": true}},
	}}}}
	resp := &plancheck.CheckPlanResponse{}
	expectManifestChanges(address, nil).CheckPlan(t.Context(), plancheck.CheckPlanRequest{Plan: plan}, resp)
	if resp.Error == nil || !strings.Contains(resp.Error.Error(), "Secret/b") {
		t.Errorf("a manifest that became unknown passes as unchanged: %v", resp.Error)
	}
	resp = &plancheck.CheckPlanResponse{}
	expectManifestChanges(address, map[string]*manifestLines{"Secret/b": nil}).CheckPlan(t.Context(), plancheck.CheckPlanRequest{Plan: plan}, resp)
	if resp.Error == nil {
		t.Error("a manifest that became unknown passes as deleted")
	}
}
