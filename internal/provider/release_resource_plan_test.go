package provider

import (
	"errors"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
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

func TestSameManifests(t *testing.T) {
	state := manifestsMap(t, map[string]string{"ConfigMap/a": "x\n", "Secret/b": "y\n"})
	if !sameManifests(map[string]string{"ConfigMap/a": "x\n", "Secret/b": "y\n"}, state) {
		t.Error("equal manifests reported different")
	}
	if sameManifests(map[string]string{"ConfigMap/a": "x\n"}, state) {
		t.Error("a missing object reported equal")
	}
	if sameManifests(map[string]string{"ConfigMap/a": "x\n", "Secret/b": "z\n"}, state) {
		t.Error("a changed object reported equal")
	}
	if sameManifests(map[string]string{}, types.MapNull(types.StringType)) {
		t.Error("a null state (import) reported equal")
	}
}

func TestValuesErrorPath(t *testing.T) {
	for msg, want := range map[string]path.Path{
		`values[1]: invalid YAML at line 2`:       path.Root("values"),
		`set["a..b"]: empty key`:                  path.Root("set"),
		`set_sensitive["x["]: unterminated index`: path.Root("set_sensitive"),
	} {
		if got := valuesErrorPath(errors.New(msg)); !got.Equal(want) {
			t.Errorf("valuesErrorPath(%q) = %s, want %s", msg, got, want)
		}
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
