package chart

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	release "helm.sh/helm/v4/pkg/release/v1"
)

func TestRender_webObjectsInInstallOrder(t *testing.T) {
	rendered := render(t, loadFixture(t, "web"), Values{}, RenderOptions{})
	want := []string{"Secret/web", "ConfigMap/web", "Service/web", "Deployment/web"}
	if got := objectNames(rendered.Objects); !reflect.DeepEqual(got, want) {
		t.Errorf("objects = %v, want %v", got, want)
	}
	if len(rendered.Hooks) != 0 || len(rendered.CRDs) != 0 {
		t.Errorf("hooks = %v, crds = %v, want none", objectNames(rendered.Hooks), objectNames(rendered.CRDs))
	}
	mustContain(t, "notes", rendered.Notes, "web serves on port 80 in namespace review-x.")
	mustContain(t, "manifest", rendered.Manifest,
		"---\n# Source: web/templates/secret.yaml\napiVersion: v1\nkind: Secret\n",
		"# Source: web/templates/deployment.yaml\n")
	if strings.Contains(rendered.Manifest, "NOTES") {
		t.Errorf("manifest holds NOTES.txt:\n%s", rendered.Manifest)
	}
}

func TestRender_valuesReachTemplates(t *testing.T) {
	rendered := render(t, loadFixture(t, "web"), Values{
		Documents: []string{"image:\n  tag: \"2.0.0\"\nenv:\n  LOG_LEVEL: debug\n"},
		Set:       map[string]string{"replicaCount": "3", "fail": "CrashLoopBackOff"},
	}, RenderOptions{ReleaseName: "shop"})
	deployment := rendered.Objects[3]
	if got := nested(deployment, "spec", "replicas"); got != int64(3) {
		t.Errorf("replicas = %#v, want 3", got)
	}
	container := nested(deployment, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	if got := container["image"]; got != "registry.example/web:2.0.0" {
		t.Errorf("image = %v", got)
	}
	if got := nested(deployment, "spec", "template", "metadata", "labels").(map[string]any)["gitlabk8s.test/fail"]; got != "CrashLoopBackOff" {
		t.Errorf("fail label = %v", got)
	}
	env := container["env"].([]any)
	if first := env[0].(map[string]any); first["name"] != "LOG_LEVEL" || first["value"] != "debug" {
		t.Errorf("env[0] = %v", first)
	}
	if got := nested(deployment, "metadata", "name"); got != "shop" {
		t.Errorf("name = %v, want the release name", got)
	}
}

func TestRender_installAndUpgrade(t *testing.T) {
	l := loadFixture(t, "with-hooks")
	install := render(t, l, Values{}, RenderOptions{})
	upgrade := render(t, l, Values{}, RenderOptions{IsUpgrade: true, Revision: 4})

	if got := objectNames(install.Objects); !reflect.DeepEqual(got, []string{"ConfigMap/web-config"}) {
		t.Errorf("objects = %v", got)
	}
	if got := objectNames(install.Hooks); !reflect.DeepEqual(got, []string{"ConfigMap/web-installed", "Job/web-migrate"}) {
		t.Fatalf("hooks = %v", got)
	}
	hookData := func(r *Rendered) map[string]any { return nested(r.Hooks[0], "data").(map[string]any) }
	if got := hookData(install); got["revision"] != "1" || got["upgrade"] != "false" {
		t.Errorf("install hook data = %v, want revision 1, upgrade false", got)
	}
	if got := hookData(upgrade); got["revision"] != "4" || got["upgrade"] != "true" {
		t.Errorf("upgrade hook data = %v, want revision 4, upgrade true", got)
	}
	if strings.Contains(install.Manifest, "web-migrate") {
		t.Error("the manifest Helm applies holds a hook")
	}
}

func TestRender_crdsAreSeparate(t *testing.T) {
	rendered := render(t, loadFixture(t, "with-crds"), Values{Set: map[string]string{"size": "5"}}, RenderOptions{})
	if got := objectNames(rendered.CRDs); !reflect.DeepEqual(got, []string{"CustomResourceDefinition/widgets.test.gitlabk8s.io"}) {
		t.Errorf("crds = %v", got)
	}
	if got := objectNames(rendered.Objects); !reflect.DeepEqual(got, []string{"Widget/web"}) {
		t.Errorf("objects = %v", got)
	}
	if got := nested(rendered.Objects[0], "spec", "size"); got != int64(5) {
		t.Errorf("size = %#v", got)
	}
	if strings.Contains(rendered.Manifest, "CustomResourceDefinition") {
		t.Error("CRDs are in the manifest Helm applies; Helm installs them separately")
	}
}

func TestRender_templateErrorKeepsFileAndLine(t *testing.T) {
	values, _ := MergeValues(Values{})
	_, err := Render(context.Background(), loadFixture(t, "broken"), values, RenderOptions{ReleaseName: "web", Namespace: "x"})
	if err == nil {
		t.Fatal("Render succeeded, want a template error")
	}
	mustContain(t, "error", err.Error(), "broken/templates/configmap.yaml:6:", "nil pointer")
}

func TestRender_requiredAndFailMessagesSurface(t *testing.T) {
	l := inMemoryChart("required", map[string]string{
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  host: {{ required \"database.host is required\" .Values.database.host }}\n",
	})
	_, err := Render(context.Background(), l, map[string]any{"database": map[string]any{}}, RenderOptions{ReleaseName: "web"})
	if err == nil {
		t.Fatal("Render succeeded, want an error")
	}
	mustContain(t, "error", err.Error(), "required/templates/cm.yaml:6:", "database.host is required")
}

func TestRender_invalidYAMLOutputNamesFile(t *testing.T) {
	l := inMemoryChart("badyaml", map[string]string{
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b: c\n",
	})
	_, err := Render(context.Background(), l, nil, RenderOptions{ReleaseName: "web"})
	if err == nil {
		t.Fatal("Render succeeded, want an error")
	}
	mustContain(t, "error", err.Error(), "badyaml/templates/cm.yaml")
}

func TestRender_lookupFindsNothing(t *testing.T) {
	rendered := render(t, loadFixture(t, "lookup"), Values{}, RenderOptions{})
	if got := nested(rendered.Objects[0], "data", "origin"); got != "not found" {
		t.Errorf("origin = %v, want \"not found\": lookup must not reach a cluster", got)
	}
}

func TestRender_randomChartDiffersBetweenRenders(t *testing.T) {
	l := loadFixture(t, "random")
	first := render(t, l, Values{}, RenderOptions{})
	second := render(t, l, Values{}, RenderOptions{})
	if first.Manifest == second.Manifest {
		t.Fatal("two renders of randAlphaNum are equal; the fixture no longer exercises the plan/apply check")
	}
	if !reflect.DeepEqual(first.Objects[0], second.Objects[0]) {
		t.Errorf("the stable ConfigMap differs: %v vs %v", first.Objects[0], second.Objects[0])
	}
}

// Helm 4's default .Capabilities.KubeVersion is 1.20 in test binaries and its client
// libraries' version in others; the provider's default is neither's, so a plan without a
// cluster renders alike in both. The test gives Helm the default of a production binary.
func TestRender_defaultKubeVersionIsNotHelms(t *testing.T) {
	helms := common.DefaultCapabilities
	t.Cleanup(func() { common.DefaultCapabilities = helms })
	production, err := common.ParseKubeVersion("v1.37.0")
	if err != nil {
		t.Fatal(err)
	}
	common.DefaultCapabilities = &common.Capabilities{KubeVersion: *production, APIVersions: helms.APIVersions, HelmVersion: helms.HelmVersion}
	caps, err := Capabilities(RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := caps.KubeVersion; got.Version != "v1.20.0" || got.Major != "1" || got.Minor != "20" || got.String() != "v1.20.0" {
		t.Errorf("default KubeVersion = %+v (%s), want v1.20.0", got, got.String())
	}
}

func TestRender_capabilities(t *testing.T) {
	l := inMemoryChart("caps", map[string]string{
		"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: caps
data:
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
  minor: {{ .Capabilities.KubeVersion.Minor | quote }}
  widgets: {{ .Capabilities.APIVersions.Has "test.gitlabk8s.io/v1" | quote }}
  apps: {{ .Capabilities.APIVersions.Has "apps/v1" | quote }}
`,
	})
	tests := []struct {
		name string
		o    RenderOptions
		want map[string]any
	}{
		{
			name: "defaults",
			o:    RenderOptions{},
			want: map[string]any{"kube": "v1.20.0", "minor": "20", "widgets": "false", "apps": "true"},
		},
		{
			name: "cluster version and API versions",
			o:    RenderOptions{KubeVersion: "v1.37.2", APIVersions: append(DefaultAPIVersions(), "test.gitlabk8s.io/v1")},
			want: map[string]any{"kube": "v1.37.2", "minor": "37", "widgets": "true", "apps": "true"},
		},
		{
			name: "a version without v and only the listed API versions",
			o:    RenderOptions{KubeVersion: "1.30.1", APIVersions: []string{"v1", "test.gitlabk8s.io/v1"}},
			want: map[string]any{"kube": "v1.30.1", "minor": "30", "widgets": "true", "apps": "false"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.ReleaseName = "web"
			rendered, err := Render(context.Background(), l, nil, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if got := nested(rendered.Objects[0], "data"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("data = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRender_kubeVersionConstraint(t *testing.T) {
	l := inMemoryChart("needs-new-kube", map[string]string{"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"})
	l.Chart.Metadata.KubeVersion = ">=1.31.0-0"
	if _, err := Render(context.Background(), l, nil, RenderOptions{ReleaseName: "web", KubeVersion: "v1.37.2"}); err != nil {
		t.Errorf("Kubernetes 1.37: %v", err)
	}
	_, err := Render(context.Background(), l, nil, RenderOptions{ReleaseName: "web", KubeVersion: "v1.29.0"})
	if err == nil {
		t.Fatal("Kubernetes 1.29 rendered a chart that needs >=1.31")
	}
	mustContain(t, "error", err.Error(), "requires kubeVersion >=1.31.0-0", "v1.29.0")
}

func TestRender_subchartValuesAndConditions(t *testing.T) {
	child := &helmchart.Chart{
		Metadata:  &helmchart.Metadata{APIVersion: "v2", Name: "cache", Version: "0.1.0"},
		Values:    map[string]any{"size": 1},
		Templates: []*common.File{{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cache\ndata:\n  size: {{ .Values.size | quote }}\n  global: {{ .Values.global.team | quote }}\n")}},
	}
	parent := inMemoryChart("shop", map[string]string{"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-shop\n"})
	parent.Chart.Metadata.Dependencies = []*helmchart.Dependency{{Name: "cache", Version: "0.1.0", Condition: "cache.enabled"}}
	parent.Chart.Values = map[string]any{"cache": map[string]any{"enabled": false}, "global": map[string]any{"team": "a"}}
	parent.Chart.SetDependencies(child)

	disabled := render(t, parent, Values{}, RenderOptions{})
	if got := objectNames(disabled.Objects); !reflect.DeepEqual(got, []string{"ConfigMap/web-shop"}) {
		t.Errorf("with cache disabled: %v", got)
	}
	// The first render must not have removed the disabled subchart from the
	// loaded chart.
	enabled := render(t, parent, Values{Set: map[string]string{"cache.enabled": "true", "cache.size": "3", "global.team": "b"}}, RenderOptions{})
	if got := objectNames(enabled.Objects); !reflect.DeepEqual(got, []string{"ConfigMap/web-cache", "ConfigMap/web-shop"}) {
		t.Fatalf("with cache enabled: %v", got)
	}
	if got := nested(enabled.Objects[0], "data"); !reflect.DeepEqual(got, map[string]any{"size": "3", "global": "b"}) {
		t.Errorf("subchart data = %v", got)
	}
	if len(parent.Chart.Dependencies()) != 1 || parent.Chart.Metadata.Dependencies[0].Enabled {
		t.Error("Render changed the loaded chart")
	}
}

func TestRender_doesNotChangeValues(t *testing.T) {
	values := map[string]any{"image": map[string]any{"tag": "9"}}
	if _, err := Render(context.Background(), loadFixture(t, "web"), values, RenderOptions{ReleaseName: "web"}); err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"image": map[string]any{"tag": "9"}}; !reflect.DeepEqual(values, want) {
		t.Errorf("values became %v", values)
	}
}

func TestRender_badInput(t *testing.T) {
	l := loadFixture(t, "web")
	if _, err := Render(context.Background(), l, nil, RenderOptions{ReleaseName: strings.Repeat("a", 54)}); err == nil || !strings.Contains(err.Error(), "at most 53") {
		t.Errorf("long release name: %v", err)
	}
	if _, err := Render(context.Background(), l, nil, RenderOptions{ReleaseName: "web", KubeVersion: "latest"}); err == nil || !strings.Contains(err.Error(), `kubernetes version "latest"`) {
		t.Errorf("bad kube version: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Render(ctx, l, nil, RenderOptions{ReleaseName: "web"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

// TestRender_sameAsHelmInstall checks that Render gives exactly what Helm's
// own install renders (helm template / install --dry-run), so that what a
// plan shows is what Helm applies.
func TestRender_sameAsHelmInstall(t *testing.T) {
	for _, name := range []string{"web", "with-hooks", "with-crds", "lookup", "generated"} {
		t.Run(name, func(t *testing.T) {
			l := loadFixture(t, name)
			values, err := MergeValues(Values{Set: map[string]string{"replicaCount": "2"}})
			if err != nil {
				t.Fatal(err)
			}
			ours, err := Render(context.Background(), l, values, RenderOptions{ReleaseName: "web", Namespace: "review-x", KubeVersion: "v1.37.2"})
			if err != nil {
				t.Fatal(err)
			}

			install := action.NewInstall(&action.Configuration{})
			install.DryRunStrategy = action.DryRunClient
			install.ReleaseName = "web"
			install.Namespace = "review-x"
			kubeVersion, err := common.ParseKubeVersion("v1.37.2")
			if err != nil {
				t.Fatal(err)
			}
			install.KubeVersion = kubeVersion
			install.Replace = true
			installed, err := install.RunWithContext(context.Background(), l.Chart, values)
			if err != nil {
				t.Fatal(err)
			}
			helmRelease := installed.(*release.Release)
			if ours.Manifest != helmRelease.Manifest {
				t.Errorf("manifest differs from Helm's:\nours:\n%s\nhelm:\n%s", ours.Manifest, helmRelease.Manifest)
			}
			if ours.Notes != helmRelease.Info.Notes {
				t.Errorf("notes = %q, Helm's %q", ours.Notes, helmRelease.Info.Notes)
			}
			if len(ours.Hooks) != len(helmRelease.Hooks) {
				t.Errorf("%d hooks, Helm has %d", len(ours.Hooks), len(helmRelease.Hooks))
			}
		})
	}
}

func TestRender_sourcesNameEachObjectsFile(t *testing.T) {
	r := render(t, loadFixture(t, "checks"), Values{Set: map[string]string{"legacyPodDisruptionBudget": "true"}}, RenderOptions{ReleaseName: "checks", Namespace: "review"})
	got := map[string]string{}
	for i, o := range r.Objects {
		got[o["kind"].(string)] = r.ObjectSources[i]
	}
	for i, o := range r.CRDs {
		got[o["kind"].(string)] = r.CRDSources[i]
	}
	want := map[string]string{
		"Deployment":               "checks/templates/deployment.yaml",
		"Service":                  "checks/templates/service.yaml",
		"PodDisruptionBudget":      "checks/templates/pdb.yaml",
		"CustomResourceDefinition": "checks/crds/gadgets.yaml",
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("sources = %v, want %v", got, want)
	}
	if len(r.ObjectSources) != len(r.Objects) || len(r.HookSources) != len(r.Hooks) {
		t.Errorf("%d sources for %d objects, %d for %d hooks", len(r.ObjectSources), len(r.Objects), len(r.HookSources), len(r.Hooks))
	}
}
