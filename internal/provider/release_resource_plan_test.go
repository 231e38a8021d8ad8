package provider

import (
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
)

func manifestsMap(t *testing.T, m map[string]string) types.Map {
	t.Helper()
	elems := map[string]attr.Value{}
	for k, v := range m {
		elems[k] = types.StringValue(v)
	}
	out, diags := types.MapValue(types.StringType, elems)
	if diags.HasError() {
		t.Fatal(diags)
	}
	return out
}

func TestNeedsUpgrade(t *testing.T) {
	state := &releaseModel{
		Manifests:    manifestsMap(t, map[string]string{"ConfigMap/web": "a: 1\n"}),
		ChartVersion: types.StringValue("1.0.0"),
		Status:       types.StringValue("deployed"),
	}
	same := *state
	if needsUpgrade(&same, state) {
		t.Error("an unchanged release needs no upgrade")
	}
	changed := *state
	changed.Manifests = manifestsMap(t, map[string]string{"ConfigMap/web": "a: 2\n"})
	if !needsUpgrade(&changed, state) {
		t.Error("changed manifests need an upgrade")
	}
	bumped := *state
	bumped.ChartVersion = types.StringValue("1.0.1")
	if !needsUpgrade(&bumped, state) {
		t.Error("a new chart version needs an upgrade")
	}
	failed := *state
	failed.Status = types.StringValue("failed")
	if !needsUpgrade(state, &failed) {
		t.Error("a failed release needs an upgrade")
	}
}

// The manifests of a state are complete only when every entry is known: an import's null map,
// an unknown one and a map with an unknown or null entry are not.
func TestCompleteManifests(t *testing.T) {
	withB := func(b types.String) types.Map {
		return types.MapValueMust(types.StringType, map[string]attr.Value{"ConfigMap/a": types.StringValue("x\n"), "Secret/b": b})
	}
	for _, tc := range []struct {
		name      string
		manifests types.Map
		complete  bool
		a         string // the known manifest of ConfigMap/a
	}{
		{"all known", manifestsMap(t, map[string]string{"ConfigMap/a": "x\n"}), true, "x\n"},
		{"empty", manifestsMap(t, map[string]string{}), true, ""},
		{"an unknown entry", withB(types.StringUnknown()), false, "x\n"},
		{"a null entry", withB(types.StringNull()), false, "x\n"},
		{"null (an import)", types.MapNull(types.StringType), false, ""},
		{"unknown", types.MapUnknown(types.StringType), false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			known, complete := completeManifests(tc.manifests)
			if complete != tc.complete || known["ConfigMap/a"] != tc.a {
				t.Errorf("completeManifests = %q, %t; want ConfigMap/a %q, %t", known, complete, tc.a, tc.complete)
			}
		})
	}
}

// A state shows a rendering when its manifests are known and equal to it (release.Recorded.Shows).
func TestRecordedOf_shows(t *testing.T) {
	state := manifestsMap(t, map[string]string{"ConfigMap/a": "x\n", "Secret/b": "y\n"})
	if !recordedOf(&releaseModel{Manifests: state}).Shows(map[string]string{"ConfigMap/a": "x\n", "Secret/b": "y\n"}) {
		t.Error("equal manifests reported different")
	}
	if recordedOf(&releaseModel{Manifests: state}).Shows(map[string]string{"ConfigMap/a": "x\n"}) {
		t.Error("a missing object reported equal")
	}
	if recordedOf(&releaseModel{Manifests: state}).Shows(map[string]string{"ConfigMap/a": "x\n", "Secret/b": "z\n"}) {
		t.Error("a changed object reported equal")
	}
	if recordedOf(&releaseModel{Manifests: types.MapNull(types.StringType)}).Shows(map[string]string{}) {
		t.Error("a null state (import) reported equal")
	}
}

func TestValuesErrorPath(t *testing.T) {
	for _, tt := range []struct {
		values chart.Values
		want   path.Path
	}{
		{values: chart.Values{Documents: []string{"a: 1", "b: [unclosed"}}, want: path.Root("values").AtListIndex(1)},
		{values: chart.Values{Documents: []string{"a: 1"}, SensitiveDocuments: []string{"b: 2", "c: [unclosed"}}, want: path.Root("values_sensitive").AtListIndex(1)},
		{values: chart.Values{Set: map[string]string{"a..b": "1"}}, want: path.Root("set").AtMapKey("a..b")},
		{values: chart.Values{SetSensitive: map[string]string{"x[": "s3cr3t"}}, want: path.Root("set_sensitive").AtMapKey("x[")},
	} {
		_, err := chart.MergeValues(tt.values)
		if err == nil {
			t.Fatalf("MergeValues(%+v) succeeded", tt.values)
		}
		if got := valuesErrorPath(err); !got.Equal(tt.want) {
			t.Errorf("valuesErrorPath(%v) = %s, want %s", err, got, tt.want)
		}
		d := valuesDiagnostic("ns/web", err, noRelease)
		if at, ok := d.(diag.DiagnosticWithPath); !ok || !at.Path().Equal(tt.want) || !strings.Contains(d.Detail(), tt.want.String()+": ") {
			t.Errorf("valuesDiagnostic(%v) = %v: %q, want it at %s and naming it", err, d, d.Detail(), tt.want)
		}
	}
	if got := valuesErrorPath(errors.New(`set["a"]: looks like set but is not typed`)); !got.Equal(path.Root("values")) {
		t.Errorf("an untyped error is pointed at %s, want values", got)
	}
}

func TestUnknownRenderInputs(t *testing.T) {
	m := &releaseModel{
		Name: types.StringValue("web"), Namespace: types.StringUnknown(), Chart: types.StringValue("./chart"),
		Repository: types.StringNull(), Version: types.StringNull(), RepositoryUsername: types.StringNull(),
		RepositoryPassword: types.StringNull(), PlainHTTP: types.BoolValue(false),
		Values: types.ListNull(yamlType{}), SetSensitive: types.MapNull(types.StringType),
		Set: types.MapValueMust(types.StringType, map[string]attr.Value{"image.tag": types.StringUnknown()}),
	}
	got := m.unknownRenderInputs()
	if len(got) != 2 || got[0] != "namespace" || got[1] != "set" {
		t.Errorf("unknownRenderInputs = %v, want [namespace set]", got)
	}
}
