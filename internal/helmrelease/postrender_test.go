package helmrelease

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// Helm 4 hands a post-renderer every object annotated with the template it came from; the
// check compares the objects as the chart rendered them.
const (
	annotatedStream = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  annotations:\n" +
		"    postrenderer.helm.sh/postrender-filename: web/templates/settings.yaml\n" +
		"---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n" +
		"    team: web\n    postrenderer.helm.sh/postrender-filename: web/templates/web.yaml\n"
	renderedStream = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n" +
		"---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    team: web\n"
)

func TestPlanCheck(t *testing.T) {
	planned := map[string]string{
		"ConfigMap/settings":  "apiVersion: v1\nkind: ConfigMap\ndata:\n  mode: review\n  token: a1\n",
		"Deployment.apps/web": "apiVersion: apps/v1\nkind: Deployment\n",
	}
	tests := []struct {
		name       string
		applied    map[string]string
		wantObject string
		wantChange string
	}{
		{name: "same", applied: planned},
		{
			name:       "random value differs",
			applied:    map[string]string{"ConfigMap/settings": "apiVersion: v1\nkind: ConfigMap\ndata:\n  mode: review\n  token: b2\n", "Deployment.apps/web": planned["Deployment.apps/web"]},
			wantObject: "ConfigMap/settings", wantChange: "changed",
		},
		{
			name:       "object only at apply",
			applied:    map[string]string{"ConfigMap/settings": planned["ConfigMap/settings"], "Deployment.apps/web": planned["Deployment.apps/web"], "Secret/extra": "kind: Secret\n"},
			wantObject: "Secret/extra", wantChange: "not in the plan",
		},
		{
			name:       "object missing at apply",
			applied:    map[string]string{"Deployment.apps/web": planned["Deployment.apps/web"]},
			wantObject: "ConfigMap/settings", wantChange: "missing at apply",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := &PlanCheck{Planned: planned, Manifests: func(rendered string) (map[string]string, error) {
				if rendered != renderedStream {
					t.Errorf("Manifests got %q, want Helm's stream without its annotation %q", rendered, renderedStream)
				}
				return tt.applied, nil
			}}
			in := bytes.NewBufferString(annotatedStream)
			out, err := check.Run(in)
			if tt.wantObject == "" {
				if err != nil || out != in {
					t.Fatalf("Run = %v, %v; want the stream unchanged", out, err)
				}
				return
			}
			var mismatch *PlanMismatchError
			if !errors.As(err, &mismatch) {
				t.Fatalf("Run error = %v, want a *PlanMismatchError", err)
			}
			if mismatch.Object != tt.wantObject || mismatch.Change != tt.wantChange {
				t.Errorf("mismatch = %s (%s), want %s (%s)", mismatch.Object, mismatch.Change, tt.wantObject, tt.wantChange)
			}
			if tt.wantChange == "changed" && (!strings.Contains(mismatch.Diff, "-  token: a1") || !strings.Contains(mismatch.Diff, "+  token: b2") || strings.Contains(mismatch.Diff, "apiVersion")) {
				t.Errorf("diff shows more or less than the changed line:\n%s", mismatch.Diff)
			}
		})
	}
}
