package chart

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

func renderForms(t *testing.T, v Values, red RedactionOptions) (*RedactedRendering, error) {
	t.Helper()
	l := loadFixture(t, "secret-forms")
	red.Namespace = "review-x"
	return renderRedacted(context.Background(), l, v, RenderOptions{ReleaseName: "web", Namespace: "review-x"}, red)
}

func formsValues(password string) Values {
	return Values{SetSensitive: map[string]string{"db.password": password, "apiToken": "api-token-1234", "admin.password": "Adm1n!pass"}}
}

func TestRedactStable_noFormOfASensitiveValueShows(t *testing.T) {
	out, err := renderForms(t, formsValues(strongPassword), RedactionOptions{Key: []byte("k")})
	if err != nil {
		t.Fatalf("renderRedacted: %v", err)
	}
	all := joinManifests(out.Manifests)
	if found := chartserver.SecretFormsIn(all, strongPassword); len(found) > 0 {
		t.Errorf("the manifests show the password as %v:\n%s", found, all)
	}
	for _, want := range []string{"checksum/password: (sensitive value hmac:", "dsn: (sensitive value hmac:", "name: DATABASE_URL", "password: (sensitive value hmac:", "name: web-forms-hook"} {
		if !strings.Contains(all, want) {
			t.Errorf("the manifests do not show %q:\n%s", want, all)
		}
	}
	if len(out.Rendered.Varying) != 0 {
		t.Errorf("Varying = %v, want none: the chart renders alike each time", out.Rendered.Varying)
	}
	// The error redactor knows the derived forms: an API server quoting one is redacted.
	for name, form := range chartserver.SecretFormsLeaks(strongPassword) {
		if msg := out.Redactor.String(`metadata.labels: Invalid value: "` + form + `"`); strings.Contains(msg, form) {
			t.Errorf("an error quoting the %s form is not redacted: %s", name, msg)
		}
	}
}

func TestRedactStable_markersChangeWithTheValueAndTheKey(t *testing.T) {
	render := func(password, key string) map[string]string {
		out, err := renderForms(t, formsValues(password), RedactionOptions{Key: []byte(key)})
		if err != nil {
			t.Fatal(err)
		}
		return out.Manifests
	}
	a, again, other, otherKey := render(strongPassword, "k1"), render(strongPassword, "k1"), render(strongPassword+"!", "k1"), render(strongPassword, "k2")
	if joinManifests(a) != joinManifests(again) {
		t.Errorf("the same value and key give different manifests")
	}
	for _, key := range []string{"ConfigMap/web-forms", "Secret/web-forms", "Deployment.apps/web-forms", "ConfigMap/web-forms-hook"} {
		if a[key] == other[key] {
			t.Errorf("%s does not change when the password changes:\n%s", key, a[key])
		}
		if a[key] == otherKey[key] {
			t.Errorf("%s does not change with the key: its markers are not keyed:\n%s", key, a[key])
		}
	}
	// A password a chart does not use changes nothing.
	unused := formsValues(strongPassword)
	unused.SetSensitive["unused"] = "never-written-1"
	out, err := renderForms(t, unused, RedactionOptions{Key: []byte("k1")})
	if err != nil {
		t.Fatal(err)
	}
	if joinManifests(out.Manifests) != joinManifests(a) {
		t.Errorf("an unused sensitive value changed the manifests")
	}
}

func TestRedactStable_renderErrorsHideTheValue(t *testing.T) {
	v := formsValues(strongPassword)
	v.Set = map[string]string{"failRender": "true"}
	_, err := renderForms(t, v, RedactionOptions{Key: []byte("k")})
	if err == nil {
		t.Fatal("renderRedacted succeeded; the chart fails with failRender")
	}
	if found := chartserver.SecretFormsIn(err.Error(), strongPassword); len(found) > 0 {
		t.Errorf("the error shows the password as %v: %v", found, err)
	}
	if !strings.Contains(err.Error(), "execution error at (secret-forms/templates/") || !strings.Contains(err.Error(), "refusing to render with password") {
		t.Errorf("the error lost what it says about the template: %v", err)
	}
}

func TestRedactStable_sensitiveDocumentLeavesAreSensitive(t *testing.T) {
	v := Values{SensitiveDocuments: []string{"db:\n  password: " + `"` + strongPassword + `"` + "\napiToken: api-token-1234\n"}}
	out, err := renderForms(t, v, RedactionOptions{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	all := joinManifests(out.Manifests)
	if found := chartserver.SecretFormsIn(all, strongPassword); len(found) > 0 {
		t.Errorf("the manifests show a values_sensitive password as %v", found)
	}
}

func TestRedactStable_structureThatDependsOnAValueIsRefused(t *testing.T) {
	l := loadFixture(t, "secret-forms")
	l.Chart.Templates = append(l.Chart.Templates, templateFile("templates/split.yaml", `apiVersion: v1
kind: ConfigMap
metadata:
  name: split
data:
{{- range $i, $part := splitList "&" .Values.db.password }}
  part{{ $i }}: {{ $part | quote }}
{{- end }}
`))
	_, err := renderRedacted(context.Background(), l, formsValues(strongPassword), RenderOptions{ReleaseName: "web", Namespace: "review-x"}, RedactionOptions{Namespace: "review-x"})
	// Round 1 turns & into a letter, so the number of parts changes: that round is dropped, and
	// round 0 still redacts each part.
	if err != nil {
		t.Fatalf("renderRedacted: %v", err)
	}
	l.Chart.Templates = append(l.Chart.Templates, templateFile("templates/cond.yaml", `{{ if hasPrefix "Tr0" .Values.db.password }}apiVersion: v1
kind: ConfigMap
metadata:
  name: only-for-this-password
{{ end }}`))
	_, err = renderRedacted(context.Background(), l, formsValues(strongPassword), RenderOptions{ReleaseName: "web", Namespace: "review-x"}, RedactionOptions{Namespace: "review-x"})
	var structure *manifest.StructureError
	if !errors.Is(err, ErrRedaction) || !errors.As(err, &structure) {
		t.Fatalf("err = %v, want an ErrRedaction with a StructureError: an object exists only for this password", err)
	}
	if strings.Contains(err.Error(), "only-for-this-password") {
		t.Errorf("the error names the object, whose name may be derived: %v", err)
	}
}

// TestRedactStable_markersAreKeyed checks the markers of the plan's path: HMACs with the
// release's key, none without a key.
func TestRedactStable_markersAreKeyed(t *testing.T) {
	l := loadFixture(t, "secret-forms")
	o := RenderOptions{ReleaseName: "web", Namespace: "review-x"}
	redact := func(password string, key []byte) *RedactedRendering {
		t.Helper()
		v := formsValues(password)
		values, err := MergeValues(v)
		if err != nil {
			t.Fatal(err)
		}
		rendered, err := RenderStable(context.Background(), l, values, o, Prior{})
		if err != nil {
			t.Fatal(err)
		}
		out, err := RedactStable(context.Background(), l, v, o, rendered, RedactionOptions{Namespace: "review-x", Key: key})
		if err != nil {
			t.Fatalf("RedactStable: %v", err)
		}
		return out
	}
	key, other := []byte("key-one-0123456789abcdef01234567"), []byte("key-two-0123456789abcdef01234567")
	a, again, changed, otherKey := redact(strongPassword, key), redact(strongPassword, key), redact(strongPassword+"!", key), redact(strongPassword, other)
	secret := a.Manifests["Secret/web-forms"]
	if !strings.Contains(secret, "admin-password: (sensitive value hmac:") || !strings.Contains(a.Manifests["ConfigMap/web-forms"], "dsn: (sensitive value hmac:") {
		t.Fatalf("the manifests do not show keyed markers:\n%s", joinManifests(a.Manifests))
	}
	if joinManifests(a.Manifests) != joinManifests(again.Manifests) {
		t.Error("the same values and key give different manifests")
	}
	if a.Manifests["ConfigMap/web-forms"] == changed.Manifests["ConfigMap/web-forms"] || secret == changed.Manifests["Secret/web-forms"] {
		t.Error("a changed password does not change the markers")
	}
	if secret == otherKey.Manifests["Secret/web-forms"] {
		t.Error("another key gives the same markers")
	}
	plain := redact(strongPassword, nil)
	if all := joinManifests(plain.Manifests); strings.Contains(all, "hmac:") {
		t.Errorf("without a key the markers carry a hash:\n%s", all)
	}
}

// TestRedactRenderError_hidesWhatTheTemplateQuotes fails the secret-forms chart with a message
// quoting the password as is and upper-cased, the password given in a sensitive document, and
// checks that the message keeps what it says about the template and no form of the password.
func TestRedactRenderError_hidesWhatTheTemplateQuotes(t *testing.T) {
	l := loadFixture(t, "secret-forms")
	o := RenderOptions{ReleaseName: "web", Namespace: "review-x"}
	v := Values{
		Set:                map[string]string{"failRender": "true"},
		SensitiveDocuments: []string{"db:\n  password: " + `"` + strongPassword + `"` + "\n"},
	}
	values, err := MergeValues(v)
	if err != nil {
		t.Fatal(err)
	}
	_, err = RenderStable(context.Background(), l, values, o, Prior{})
	if err == nil {
		t.Fatal("RenderStable succeeded; the chart fails with failRender")
	}
	literal := manifest.NewRedactor(v.SensitiveInputs(), nil, nil)
	if plain := literal.String(err.Error()); !strings.Contains(plain, strings.ToUpper(strongPassword)) {
		t.Fatalf("the literal redaction alone already hides the upper-cased password, so this test proves nothing: %s", plain)
	}
	message := RedactRenderError(context.Background(), l, v, o, err, literal)
	if found := chartserver.SecretFormsIn(message, strongPassword); len(found) > 0 {
		t.Errorf("the message shows the password as %v: %s", found, message)
	}
	if !strings.Contains(message, "refusing to render with password (sensitive value)") || !strings.Contains(message, "secret-forms/templates/") {
		t.Errorf("the message lost what it says about the template: %s", message)
	}
}
