package chart

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/patch"
)

// A frozen chart, as Helm records it, gives its templates back: rendered again with the
// release's values taken all for sensitive inputs, no form of the password shows, nor the
// values given as not sensitive, where the chart writes them alone.
func TestRedactRecorded_hidesWhatAnyGivenValueDerives(t *testing.T) {
	l := loadFixture(t, "secret-forms")
	o := RenderOptions{ReleaseName: "web", Namespace: "review-x"}
	config := map[string]any{"db": map[string]any{"password": strongPassword, "host": "db"}, "apiToken": "api-token-1234"}
	applied := render(t, l, Values{SetSensitive: map[string]string{"db.password": strongPassword}, Set: map[string]string{"db.host": "db", "apiToken": "api-token-1234"}}, o)
	frozen := mustFreeze(t, l, applied.Files)
	literal := copyChart(frozen.Chart)
	literal.Files = nil
	if _, ok := Unfreeze(literal); ok {
		t.Error("Unfreeze says it has the templates of a chart frozen without them")
	}
	ch, ok := Unfreeze(frozen.Chart)
	if !ok {
		t.Fatal("Unfreeze found no templates in a frozen chart")
	}
	if _, ok := Unfreeze(l.Chart); !ok {
		t.Error("Unfreeze says a chart installed as it is (by helm) has no templates")
	}
	out, err := RedactRecorded(context.Background(), &Loaded{Chart: ch}, config, o, nil, RedactionOptions{Namespace: "review-x", Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	all := joinManifests(out.Manifests)
	if found := chartserver.SecretFormsIn(all, strongPassword); len(found) > 0 {
		t.Errorf("the manifests show the password as %v:\n%s", found, all)
	}
	if strings.Contains(all, "api-token-1234") || !strings.Contains(all, "dsn: (sensitive value hmac:") {
		t.Errorf("the manifests do not hide every value given:\n%s", all)
	}
	if strings.Contains(strings.Join(RecordedInputs(config), " "), "db ") {
		t.Errorf("RecordedInputs = %v, want no leaf shorter than %d", RecordedInputs(config), minSensitiveLeafLength)
	}
}

// A value that decides which objects the chart renders is taken as it is; the others are
// still hidden in every form the chart gives them.
func TestRedactRecorded_valuesThatDecideTheObjectsAreTakenAsGiven(t *testing.T) {
	l := inMemoryChart("deciding", map[string]string{
		"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: db
data:
  dsn: {{ printf "postgres://app:%s@db/app" (.Values.auth.password | urlquery) | quote }}
  replicas: {{ .Values.replicas | quote }}
{{- if eq .Values.architecture "replication" }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: replica
data:
  checksum: {{ .Values.auth.password | sha256sum | quote }}
{{- end }}
`,
	})
	config := map[string]any{"architecture": "replication", "replicas": float64(3), "auth": map[string]any{"password": strongPassword}}
	o := RenderOptions{ReleaseName: "db", Namespace: "review-x"}
	out, err := RedactRecorded(context.Background(), l, config, o, nil, RedactionOptions{Namespace: "review-x", Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	all := joinManifests(out.Manifests)
	if found := chartserver.SecretFormsIn(all, strongPassword); len(found) > 0 {
		t.Errorf("the manifests show the password as %v:\n%s", found, all)
	}
	if !strings.Contains(all, "name: replica") || strings.Contains(all, `replicas: "3"`) {
		t.Errorf("want the replica the architecture decides, and the replicas hidden:\n%s", all)
	}
}

// A chart frozen with patches gives them back, and freezing it again without any drops them;
// a chart Helm installed has none.
func TestRecordedPatches_keptByFreeze(t *testing.T) {
	l := loadFixture(t, "patchable")
	patches := []patch.Patch{{Target: patch.Target{Kind: "Deployment"}, Patch: "spec:\n  template:\n    spec:\n      nodeSelector:\n        pool: tools\n"}}
	o := RenderOptions{ReleaseName: "tools", Namespace: "review-x"}
	frozen, err := Freeze(l, render(t, l, Values{}, o).Files, patches)
	if err != nil {
		t.Fatal(err)
	}
	got, err := RecordedPatches(frozen.Chart)
	if err != nil || !slices.Equal(got, patches) {
		t.Fatalf("RecordedPatches = %+v, %v; want %+v", got, err, patches)
	}
	again, err := Freeze(&Loaded{Chart: frozen.Chart}, render(t, l, Values{}, o).Files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := RecordedPatches(again.Chart); err != nil || got != nil {
		t.Errorf("a chart frozen again without patches keeps %+v, %v", got, err)
	}
	if got, err := RecordedPatches(l.Chart); err != nil || got != nil {
		t.Errorf("a chart as loaded has patches %+v, %v", got, err)
	}
}
