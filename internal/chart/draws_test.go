package chart

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// drawnRelease renders the fixture "drawn" as release "web" in "review-x" with the test seed,
// applying each rendering to a fake cluster, as a release's plans and applies do.
type drawnRelease struct {
	t       *testing.T
	l       *Loaded
	cluster *fakeCluster
	prior   Prior
}

func newDrawnRelease(t *testing.T) *drawnRelease {
	return &drawnRelease{t: t, l: loadFixture(t, "drawn"), cluster: newFakeCluster()}
}

// plan renders with values over what was applied last.
func (r *drawnRelease) plan(values map[string]any) *Rendered {
	r.t.Helper()
	rendered, err := RenderStable(context.Background(), r.l, values,
		RenderOptions{ReleaseName: "web", Namespace: "review-x", Seed: testSeed, Lookup: r.cluster}, r.prior)
	if err != nil {
		r.t.Fatalf("render: %v", err)
	}
	return rendered
}

// apply renders with values and applies the rendering.
func (r *drawnRelease) apply(values map[string]any) *Rendered {
	r.t.Helper()
	rendered := r.plan(values)
	r.cluster.apply(rendered, "review-x")
	r.prior = Prior{Documents: applied(rendered), Traces: rendered.Traces}
	return rendered
}

// secretData returns the decoded value of key in the data of Secret name.
func secretData(t *testing.T, r *Rendered, name, key string) string {
	t.Helper()
	obj := objectsByName(r)["Secret/"+name]
	encoded, _ := nested(obj, "data", key).(string)
	decoded, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || encoded == "" {
		t.Fatalf("Secret %s has no data %s: %v", name, key, obj)
	}
	return string(decoded)
}

// secretCertificate parses the PEM certificate in the data of Secret name at key.
func secretCertificate(t *testing.T, r *Rendered, name, key string) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode([]byte(secretData(t, r, name, key)))
	if block == nil {
		t.Fatalf("Secret %s holds no PEM block at %s", name, key)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func TestRenderStable_unrelatedChangeKeepsEveryDrawnValue(t *testing.T) {
	release := newDrawnRelease(t)
	installed := release.apply(nil)
	changed := release.plan(map[string]any{"message": "changed"})
	before, after := objectsByName(installed), objectsByName(changed)
	for name, obj := range before {
		if name == "ConfigMap/web-config" {
			continue
		}
		if !reflect.DeepEqual(obj, after[name]) {
			t.Errorf("%s changed with a value it does not use:\n%v\nvs\n%v", name, obj, after[name])
		}
	}
	if got, want := nested(after["ConfigMap/web-config"], "data", "app.ini"), nested(before["ConfigMap/web-config"], "data", "app.ini"); got != want {
		t.Errorf("app.ini changed with a value it does not use: %v -> %v", want, got)
	}
	if len(changed.Generated) > 0 {
		t.Errorf("an unrelated change draws %v anew", objectNames(changed.Generated))
	}
}

func TestRenderStable_rotatedPasswordRotates(t *testing.T) {
	release := newDrawnRelease(t)
	installed := release.apply(map[string]any{"password": "first-password"})
	rotated := release.plan(map[string]any{"password": "second-password"})
	user, hash, _ := strings.Cut(secretData(t, rotated, "web-auth", "auth"), ":")
	if user != "admin" || bcrypt.CompareHashAndPassword([]byte(hash), []byte("second-password")) != nil {
		t.Errorf("the rotated htpasswd %s:%s does not verify the new password", user, hash)
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte("first-password")) == nil {
		t.Error("the rotated htpasswd still verifies the old password")
	}
	if !strings.Contains(strings.Join(objectNames(rotated.Generated), " "), "Secret/web-auth") {
		t.Errorf("Generated = %v: a new bcrypt salt cannot be drawn alike by the apply, so the plan must leave it unknown", objectNames(rotated.Generated))
	}
	if secretData(t, installed, "web-auth", "auth") == secretData(t, rotated, "web-auth", "auth") {
		t.Error("the htpasswd did not change")
	}
}

func TestRenderStable_certificateFollowsItsHost(t *testing.T) {
	release := newDrawnRelease(t)
	installed := release.apply(map[string]any{"host": "a.example.test"})
	moved := release.plan(map[string]any{"host": "b.example.test"})
	cert := secretCertificate(t, moved, "web-tls", "tls.crt")
	if cert.Subject.CommonName != "b.example.test" {
		t.Errorf("the certificate names %s after the host changed to b.example.test", cert.Subject.CommonName)
	}
	if err := cert.CheckSignatureFrom(secretCertificate(t, moved, "web-tls", "ca.crt")); err != nil {
		t.Errorf("the new certificate is not signed by the CA beside it: %v", err)
	}
	if secretData(t, installed, "web-tls", "ca.crt") == secretData(t, moved, "web-tls", "ca.crt") {
		t.Error("the CA was kept while the certificate it must sign was drawn anew")
	}
	// The other certificate the CA signs names no host, yet is drawn anew with the CA.
	metrics := secretCertificate(t, moved, "web-metrics-tls", "tls.crt")
	if err := metrics.CheckSignatureFrom(secretCertificate(t, moved, "web-tls", "ca.crt")); err != nil {
		t.Errorf("the metrics certificate is not signed by the new CA: %v", err)
	}
	if secretData(t, moved, "web-metrics-tls", "ca.crt") != secretData(t, moved, "web-tls", "ca.crt") {
		t.Error("the two Secrets hold different CAs")
	}
}

func TestRenderStable_settingBesideADrawnKeyIsApplied(t *testing.T) {
	release := newDrawnRelease(t)
	installed := release.apply(map[string]any{"level": "info"})
	changed := release.plan(map[string]any{"level": "debug"})
	before, _ := nested(objectsByName(installed)["ConfigMap/web-config"], "data", "app.ini").(string)
	after, _ := nested(objectsByName(changed)["ConfigMap/web-config"], "data", "app.ini").(string)
	if !strings.Contains(after, "log_level = debug") {
		t.Errorf("the changed setting did not reach the file:\n%s", after)
	}
	if strings.Split(before, "\n")[0] != strings.Split(after, "\n")[0] {
		t.Errorf("the drawn key changed with a setting beside it:\n%s\n%s", before, after)
	}
	if len(changed.Generated) > 0 {
		t.Errorf("Generated = %v: a key drawn from the release's seed is drawn alike by the apply, so the plan can show it", objectNames(changed.Generated))
	}
}

func TestRenderStable_lookupOrGenerateReachesAFixedPoint(t *testing.T) {
	release := newDrawnRelease(t)
	installed := release.apply(nil)
	next := release.plan(nil)
	before, after := objectsByName(installed), objectsByName(next)
	for name, obj := range before {
		if !reflect.DeepEqual(obj, after[name]) {
			t.Errorf("the plan after the install renders %s differently:\n%v\nvs\n%v", name, obj, after[name])
		}
	}
	if len(next.Generated) > 0 {
		t.Errorf("the plan after the install draws anew: %v", objectNames(next.Generated))
	}
	key := secretData(t, installed, "web-session", "session-key")
	if len(key) != 32 {
		t.Errorf("session key %q", key)
	}
}

func TestRenderStable_withoutTracesEveryDrawnValueIsKept(t *testing.T) {
	release := newDrawnRelease(t)
	installed := release.apply(nil)
	release.prior.Traces = nil // applied by Helm itself
	changed := release.plan(map[string]any{"level": "debug", "password": "second-password"})
	if a, b := secretData(t, installed, "web-auth", "auth"), secretData(t, changed, "web-auth", "auth"); a != b {
		t.Errorf("without traces, the htpasswd was drawn anew: %s -> %s", a, b)
	}
}

// An input given where a chart draws its default is the input, not a drawn value: once it is
// left out, the default is drawn anew, as Helm draws it, and the former input is not kept
// (nextcloud's metrics token, jenkins' admin password without its lookup). A rendering that
// draws nothing records that it drew nothing.
func TestRenderStable_inputLeftOutForADrawnDefaultIsDrawnAnew(t *testing.T) {
	l := inMemoryChart("tok", map[string]string{"templates/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: tok\n" +
		"stringData:\n  token: {{ .Values.token | default (randAlphaNum 16) | quote }}\n"})
	o := RenderOptions{ReleaseName: "web", Namespace: "review-x", Seed: testSeed}
	renderWith := func(set map[string]string, prior Prior) (*Rendered, string) {
		t.Helper()
		values, err := MergeValues(Values{Set: set})
		if err != nil {
			t.Fatal(err)
		}
		rendered, err := RenderStable(context.Background(), l, values, o, prior)
		if err != nil {
			t.Fatal(err)
		}
		token, _ := nested(objectsByName(rendered)["Secret/tok"], "stringData", "token").(string)
		return rendered, token
	}
	given, _ := renderWith(map[string]string{"token": "chosen-token"}, Prior{})
	if given.Traces == nil {
		t.Fatal("a rendering that draws nothing records no traces, which reads as a release Helm applied")
	}
	prior := Prior{Documents: applied(given), Traces: given.Traces}
	if _, token := renderWith(nil, prior); token == "chosen-token" || len(token) != 16 {
		t.Errorf("the input left out: token %q, want the chart's default drawn anew", token)
	}
	// Applied by Helm itself (no traces): what it applied is kept, as before.
	prior.Traces = nil
	if _, token := renderWith(nil, prior); token != "chosen-token" {
		t.Errorf("without traces: token %q, want the applied one kept", token)
	}
}

func TestLookupRound_answersWithTheOverlay(t *testing.T) {
	cluster := newFakeCluster()
	live := manifest.Object{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "ns", "uid": "u"}, "data": map[string]any{"a": "b2xk"}}
	cluster.objects[lookupCall{"v1", "Secret", "ns", "s"}] = live
	rendered := manifest.Object{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"}, "stringData": map[string]any{"a": "new"}}
	round := newLookups(cluster, "ns").round([]manifest.Object{rendered})
	got, err := round.fn(context.Background())("v1", "Secret", "ns", "s")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "ns", "uid": "u"}, "data": map[string]any{"a": "bmV3"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lookup = %v, want %v", got, want)
	}
	list, _ := round.fn(context.Background())("v1", "Secret", "ns", "")
	if items, _ := list["items"].([]any); len(items) != 1 || !reflect.DeepEqual(items[0], want) {
		t.Errorf("list lookup = %v", list)
	}
	if round.sameWith(context.Background(), nil) {
		t.Error("the answers without the overlay are taken for the same")
	}
	if !round.sameWith(context.Background(), []manifest.Object{rendered}) {
		t.Error("the answers with the same overlay are taken for different")
	}
}

func TestHasWordOf_findsWholeWordsOnly(t *testing.T) {
	for text, want := range map[string]bool{
		`{{ now | date "2006" }}`:                  true,
		`{{ randAlphaNum 10 | b64enc }}`:           true,
		`{{- (tpl .Values.x .) -}}`:                true,
		`{{ 10|randAlphaNum }}`:                    true,
		`{{ "x" | printf "%s}}" (uuidv4) }}`:       true,
		"name: a\n# for now, nothing\n":            true,
		`{{ .Values.unknown }} known snow nowt`:    false,
		`{{ .Values.randAlphaNumbers }}`:           false,
		`{{ include "app.tpl_name" . }}`:           false,
		`{{ .Values.now_ }} {{ template "ago2" }}`: false,
		"": false,
	} {
		if got := hasWordOf([]byte(text), drawingNames); got != want {
			t.Errorf("hasWordOf(%q) = %t, want %t", text, got, want)
		}
	}
}

func TestMayDraw_looksIntoEveryTemplateAndSubchart(t *testing.T) {
	for name, want := range map[string]bool{
		"generated": false, "app": false, "with-hooks": false, "zoo-umbrella": false,
		"random": true, "drawn": true, "zoo-passwords": true, "zoo-webhook": true,
	} {
		if got := mayDraw(loadFixture(t, name).Chart); got != want {
			t.Errorf("%s: mayDraw = %t, want %t", name, got, want)
		}
	}
	parent := inMemoryChart("parent", map[string]string{"templates/cm.yaml": "kind: ConfigMap\n"}).Chart
	child := inMemoryChart("child", map[string]string{"templates/_helpers.tpl": `{{ define "x" }}{{ genCA "ca" 365 }}{{ end }}`}).Chart
	if mayDraw(parent) {
		t.Error("a chart without drawing functions may draw")
	}
	parent.AddDependency(child)
	if !mayDraw(parent) {
		t.Error("a subchart's partial that calls genCA was not found")
	}
}

// A value drawn through tpl, from the values, is drawn: the chart names tpl.
func TestRenderStable_drawsThroughTpl(t *testing.T) {
	l := inMemoryChart("tpl", map[string]string{"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  password: {{ tpl .Values.password . | quote }}\n"})
	values, err := MergeValues(Values{Set: map[string]string{"password": "{{ randAlphaNum 12 }}"}})
	if err != nil {
		t.Fatal(err)
	}
	o := RenderOptions{ReleaseName: "web", Namespace: "review-x", Seed: []byte("seed")}
	rendered, err := RenderStable(context.Background(), l, values, o, Prior{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rendered.Varying, []string{"tpl/templates/cm.yaml"}) {
		t.Errorf("Varying = %q, want the ConfigMap's template", rendered.Varying)
	}
}

// What lets a chart that names no drawing function be rendered once: with another seed it
// renders exactly alike. Every fixture that renders with its own values is tried.
func TestRenderStable_aChartThatDrawsNothingRendersAlikeWithAnySeed(t *testing.T) {
	entries, err := os.ReadDir(filepath.Dir(fixturePath("app")))
	if err != nil {
		t.Fatal(err)
	}
	tried := 0
	for _, e := range entries {
		l := loadFixture(t, e.Name())
		if mayDraw(l.Chart) {
			continue
		}
		values, err := MergeValues(Values{})
		if err != nil {
			t.Fatal(err)
		}
		var files [2]map[string]string
		for i, seed := range []string{"one seed", "another seed"} {
			o := RenderOptions{ReleaseName: "web", Namespace: "review-x", Seed: []byte(seed)}
			rendered, err := RenderStable(context.Background(), l, values, o, Prior{})
			if err != nil {
				break
			}
			files[i] = rendered.Files
		}
		if files[0] == nil || files[1] == nil {
			continue
		}
		tried++
		if !maps.Equal(files[0], files[1]) {
			t.Errorf("%s renders differently with another seed", e.Name())
		}
	}
	if tried < 10 {
		t.Errorf("%d fixtures tried, want at least 10", tried)
	}
}

// A template that renders more than two objects of one kind, each holding what one call drew
// in its own field (opentelemetry-operator's webhook template: a Secret, two webhook
// configurations and four definitions, one with the CA): every one is found at its own place
// in what was applied, and a plan with nothing changed keeps all of them.
func TestRenderStable_manyObjectsOfOneKindInOneTemplateKeepTheirValues(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: many\nversion: 0.1.0\n",
		"templates/many.yaml": `{{- $ca := genCA "many-ca" 365 }}
{{- range $i := until 4 }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: bundle-{{ $i }}
data:
  ca-{{ $i }}.crt: {{ $ca.Cert | b64enc }}
{{- end }}
`,
	}
	writeTree(t, dir, files)
	l, err := Load(context.Background(), Source{Chart: dir})
	if err != nil {
		t.Fatal(err)
	}
	release := &drawnRelease{t: t, l: l, cluster: newFakeCluster()}
	installed := release.apply(nil)
	again := release.plan(nil)
	if len(again.Generated) > 0 {
		t.Errorf("a plan with nothing changed draws %v anew", objectNames(again.Generated))
	}
	if !reflect.DeepEqual(objectsByName(again), objectsByName(installed)) {
		t.Errorf("a plan with nothing changed renders other objects than were applied:\n%s\nvs\n%s", again.Manifest, installed.Manifest)
	}
}

// An object holding a drawn key or certificate is found by its name, not by its position in its
// template: an unrelated Secret rendered before it in the same template (sealed-secrets' ingress
// Secrets before its self-signed one) leaves the certificate as it was, and a record that keys
// the traces by position (written before places had names) keeps it too. Named otherwise in
// its place, it is found there.
func TestRenderStable_objectAddedBeforeADrawnCertificateKeepsIt(t *testing.T) {
	l := inMemoryChart("tls", map[string]string{"templates/tls.yaml": `{{- range .Values.extra }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ . }}
stringData:
  a: b
---
{{- end }}
{{- $ca := genCA "ca" 365 }}
{{- $cert := genSignedCert "a.example.test" nil (list "a.example.test") 365 $ca }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ .Values.name | default "tls" }}
data:
  tls.crt: {{ $cert.Cert | b64enc | quote }}
  ca.crt: {{ $ca.Cert | b64enc | quote }}
`})
	o := RenderOptions{ReleaseName: "web", Namespace: "review-x", Seed: testSeed}
	renderNamed := func(name string, extra []any, prior Prior) (*Rendered, string) {
		t.Helper()
		rendered, err := RenderStable(context.Background(), l, map[string]any{"extra": extra, "name": name}, o, prior)
		if err != nil {
			t.Fatal(err)
		}
		return rendered, secretData(t, rendered, name, "tls.crt")
	}
	renderWith := func(extra []any, prior Prior) (*Rendered, string) {
		t.Helper()
		return renderNamed("tls", extra, prior)
	}
	installed, cert := renderWith(nil, Prior{})
	prior := Prior{Documents: applied(installed), Traces: installed.Traces}
	added, again := renderWith([]any{"one", "two"}, prior)
	if again != cert || len(added.Generated) != 0 {
		t.Errorf("two Secrets added before it: the certificate drawn anew (%d objects generated)", len(added.Generated))
	}
	if _, back := renderWith(nil, Prior{Documents: applied(added), Traces: added.Traces}); back != cert {
		t.Error("the Secrets taken out again: the certificate drawn anew")
	}
	byPosition := map[string]string{}
	for at, trace := range installed.Traces {
		byPosition[strings.Replace(at, "|/tls#0|", "|0|", 1)] = trace
	}
	if maps.Equal(byPosition, installed.Traces) {
		t.Fatalf("no trace is keyed by the Secret's name: %v", slices.Collect(maps.Keys(installed.Traces)))
	}
	if _, kept := renderWith(nil, Prior{Documents: applied(installed), Traces: byPosition}); kept != cert {
		t.Error("a record keyed by position: the certificate drawn anew")
	}
	if _, renamed := renderNamed("tls-renamed", nil, prior); renamed != cert {
		t.Error("named otherwise in its place: the certificate drawn anew")
	}
}

// A key, certificate or bcrypt hash is drawn anew with the draws it is made from or with, and
// no others: a rotated password's hash leaves the CA beside it in its Secret and the one of
// another template as they were; a host changed in a certificate draws the CA that signs it
// anew with it, so that it verifies against the CA beside it. A value holding no placeholder
// (a fingerprint of the CA, a checksum of a template's output) follows what it is made from,
// and matches it. With nothing changed, nothing is drawn anew.
func TestRenderStable_drawsAnewOnlyWhatChangesTogether(t *testing.T) {
	l := inMemoryChart("groups", map[string]string{
		"templates/auth.yaml": `{{- $token := genCA "token-ca" 365 }}
apiVersion: v1
kind: Secret
metadata:
  name: auth
data:
  htpasswd: {{ htpasswd "admin" .Values.password | b64enc | quote }}
  token.crt: {{ $token.Cert | b64enc | quote }}
`,
		"templates/tls.yaml": `{{- $ca := genCA "ca" 365 }}
{{- $cert := genSignedCert .Values.host nil (list .Values.host) 365 $ca }}
apiVersion: v1
kind: Secret
metadata:
  name: tls
data:
  ca.crt: {{ $ca.Cert | b64enc | quote }}
  tls.crt: {{ $cert.Cert | b64enc | quote }}
  ca.sha256: {{ $ca.Cert | sha256sum | b64enc | quote }}
`,
		"templates/config.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  annotations:
    checksum/auth: {{ include (print $.Template.BasePath "/auth.yaml") . | sha256sum | quote }}
data:
  a: b
`,
	})
	render := func(password, host string, prior Prior) *Rendered {
		t.Helper()
		return renderSeeded(t, l, map[string]any{"password": password, "host": host}, prior)
	}
	checksum := func(r *Rendered) any {
		return nested(objectsByName(r)["ConfigMap/app"], "metadata", "annotations", "checksum/auth")
	}
	fingerprintMatches := func(r *Rendered) {
		t.Helper()
		sum := sha256.Sum256([]byte(secretData(t, r, "tls", "ca.crt")))
		if got := secretData(t, r, "tls", "ca.sha256"); got != hex.EncodeToString(sum[:]) {
			t.Errorf("the fingerprint %s is not the CA's beside it", got)
		}
	}
	installed := render("one", "a.example.test", Prior{})
	prior := Prior{Documents: applied(installed), Traces: installed.Traces}

	rotated := render("two", "a.example.test", prior)
	fingerprintMatches(rotated)
	if secretData(t, rotated, "auth", "htpasswd") == secretData(t, installed, "auth", "htpasswd") {
		t.Error("the rotated password's hash was kept")
	}
	if checksum(rotated) == checksum(installed) {
		t.Error("the hash of the template whose password rotated was kept")
	}
	for _, kept := range [][2]string{{"auth", "token.crt"}, {"tls", "ca.crt"}, {"tls", "tls.crt"}} {
		if secretData(t, rotated, kept[0], kept[1]) != secretData(t, installed, kept[0], kept[1]) {
			t.Errorf("the password rotated: Secret %s's %s drawn anew", kept[0], kept[1])
		}
	}
	if got, want := objectNames(rotated.Generated), []string{"ConfigMap/app", "Secret/auth"}; !slices.Equal(sortedCopy(got), want) {
		t.Errorf("the password rotated: generated %v, want %v", got, want)
	}

	moved := render("one", "b.example.test", prior)
	fingerprintMatches(moved)
	ca, cert := secretCertificate(t, moved, "tls", "ca.crt"), secretCertificate(t, moved, "tls", "tls.crt")
	if secretData(t, moved, "tls", "ca.crt") == secretData(t, installed, "tls", "ca.crt") {
		t.Error("the host changed: the CA that signs its certificate was kept")
	}
	if err := cert.CheckSignatureFrom(ca); err != nil || cert.Subject.CommonName != "b.example.test" {
		t.Errorf("the host changed: the certificate for %q does not verify against the CA beside it: %v", cert.Subject.CommonName, err)
	}
	if secretData(t, moved, "auth", "token.crt") != secretData(t, installed, "auth", "token.crt") {
		t.Error("the host changed: the other template's CA drawn anew")
	}
	if checksum(moved) != checksum(installed) {
		t.Error("the host changed: the checksum of the template it does not change was drawn anew")
	}

	again := render("one", "a.example.test", prior)
	if again.Files["groups/templates/auth.yaml"] != installed.Files["groups/templates/auth.yaml"] || !maps.Equal(again.Files, installed.Files) || len(again.Generated) != 0 {
		t.Errorf("nothing changed: drawn anew %v", objectNames(again.Generated))
	}
}

// sortedCopy returns s sorted, s left as it is.
func sortedCopy(s []string) []string {
	return slices.Sorted(slices.Values(s))
}

// A CA a chart keeps in its values for the templates after the first (cilium's Hubble
// certificates) is one draw: a host changed in one template's certificate draws the CA anew in
// every template, and the certificates it signs, each verifying against the CA beside it; a
// password rotated elsewhere leaves them all as they were.
func TestRenderStable_aCASharedThroughTheValuesIsDrawnAnewEverywhere(t *testing.T) {
	setup := `{{- define "setup-ca" }}{{- if not .ca }}{{- $_ := set . "ca" (genCA "shared-ca" 365) }}{{- end }}{{- end }}`
	secret := func(name, host string) string {
		return `{{- $_ := include "setup-ca" . }}
{{- $cert := genSignedCert ` + host + ` nil nil 365 .ca }}
apiVersion: v1
kind: Secret
metadata:
  name: ` + name + `
data:
  ca.crt: {{ .ca.Cert | b64enc | quote }}
  tls.crt: {{ $cert.Cert | b64enc | quote }}
`
	}
	l := inMemoryChart("shared", map[string]string{
		"templates/_helpers.tpl": setup,
		"templates/a.yaml":       secret("server", ".Values.host"),
		"templates/b.yaml":       secret("relay", `"relay"`),
		"templates/c.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: auth
data:
  htpasswd: {{ htpasswd "admin" .Values.password | b64enc | quote }}
`,
	})
	render := func(host, password string, prior Prior) *Rendered {
		t.Helper()
		return renderSeeded(t, l, map[string]any{"host": host, "password": password}, prior)
	}
	verifies := func(r *Rendered, name string) {
		t.Helper()
		if err := secretCertificate(t, r, name, "tls.crt").CheckSignatureFrom(secretCertificate(t, r, name, "ca.crt")); err != nil {
			t.Errorf("Secret %s's certificate does not verify against the CA beside it: %v", name, err)
		}
	}
	installed := render("a.example.test", "one", Prior{})
	if secretData(t, installed, "server", "ca.crt") != secretData(t, installed, "relay", "ca.crt") {
		t.Fatal("the chart does not share its CA")
	}
	prior := Prior{Documents: applied(installed), Traces: installed.Traces}

	rotated := render("a.example.test", "two", prior)
	for _, name := range []string{"server", "relay"} {
		for _, key := range []string{"ca.crt", "tls.crt"} {
			if secretData(t, rotated, name, key) != secretData(t, installed, name, key) {
				t.Errorf("a password rotated elsewhere: Secret %s's %s drawn anew", name, key)
			}
		}
	}

	moved := render("b.example.test", "one", prior)
	if secretData(t, moved, "relay", "ca.crt") == secretData(t, installed, "relay", "ca.crt") || secretData(t, moved, "relay", "tls.crt") == secretData(t, installed, "relay", "tls.crt") {
		t.Error("the host of the server changed: the relay's CA or certificate was kept")
	}
	if secretData(t, moved, "server", "ca.crt") != secretData(t, moved, "relay", "ca.crt") {
		t.Error("the host of the server changed: the two Secrets hold different CAs")
	}
	verifies(moved, "server")
	verifies(moved, "relay")
}

// A prior without traces (a release helm applied, drawing with randomness of its own) is
// traced from the chart and values Helm recorded, as the rendering at hand is: with the
// password helm was given, its hash and the CA are kept; with a rotated one, the hash is drawn
// anew and the CA kept. Without what Helm recorded, every drawn value is kept, the hash too.
func TestRenderStable_priorWithoutTracesIsTracedFromWhatHelmRecorded(t *testing.T) {
	l := inMemoryChart("helm", map[string]string{
		"templates/auth.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: auth
data:
  htpasswd: {{ htpasswd "admin" .Values.password | b64enc | quote }}
`,
		"templates/tls.yaml": `{{- $ca := genCA "ca" 365 }}
apiVersion: v1
kind: Secret
metadata:
  name: tls
data:
  ca.crt: {{ $ca.Cert | b64enc | quote }}
`,
	})
	o := RenderOptions{ReleaseName: "web", Namespace: "review-x", Seed: testSeed}
	helmOptions := o
	helmOptions.Seed = []byte("another seed, as helm draws at random")
	helm, err := RenderStable(context.Background(), l, map[string]any{"password": "one"}, helmOptions, Prior{})
	if err != nil {
		t.Fatal(err)
	}
	recorded := &RecordedRendering{Loaded: l, Values: map[string]any{"password": "one"}}
	render := func(password string, recorded *RecordedRendering) *Rendered {
		t.Helper()
		return renderSeeded(t, l, map[string]any{"password": password}, Prior{Documents: applied(helm), Recorded: recorded})
	}
	hashOf := func(r *Rendered) string { return secretData(t, r, "auth", "htpasswd") }
	verifies := func(r *Rendered, password string) bool {
		_, hash, _ := strings.Cut(hashOf(r), ":")
		return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
	}

	if same := render("one", recorded); hashOf(same) != hashOf(helm) || secretData(t, same, "tls", "ca.crt") != secretData(t, helm, "tls", "ca.crt") || len(same.Generated) != 0 {
		t.Errorf("the password helm was given: drawn anew %v", objectNames(same.Generated))
	}
	rotated := render("two", recorded)
	if !verifies(rotated, "two") || verifies(rotated, "one") {
		t.Errorf("the rotated password's hash %q does not verify it, or still verifies helm's", hashOf(rotated))
	}
	if secretData(t, rotated, "tls", "ca.crt") != secretData(t, helm, "tls", "ca.crt") {
		t.Error("the rotated password: the CA helm drew was drawn anew")
	}
	if kept := render("two", nil); hashOf(kept) != hashOf(helm) {
		t.Error("without what Helm recorded, the hash helm drew was not kept")
	}
}

// A certificate and its CA written so that no placeholder shows (base64 twice) hold no draw
// anyone can tell: a host changed in the certificate draws anew every value of its template
// holding none, the CA with it, so that the certificate still verifies against the CA beside it.
func TestRenderStable_aCertificateHidingItsDrawsTakesItsTemplatesValuesWithIt(t *testing.T) {
	l := inMemoryChart("hidden", map[string]string{"templates/tls.yaml": `{{- $ca := genCA "ca" 365 }}
{{- $cert := genSignedCert .Values.host nil (list .Values.host) 365 $ca }}
apiVersion: v1
kind: Secret
metadata:
  name: tls
data:
  ca.crt: {{ $ca.Cert | b64enc | b64enc | quote }}
  tls.crt: {{ $cert.Cert | b64enc | b64enc | quote }}
`})
	render := func(host string, prior Prior) *Rendered {
		t.Helper()
		return renderSeeded(t, l, map[string]any{"host": host}, prior)
	}
	certificate := func(r *Rendered, key string) *x509.Certificate {
		t.Helper()
		decoded, err := base64.StdEncoding.DecodeString(secretData(t, r, "tls", key))
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(decoded)
		if block == nil {
			t.Fatalf("Secret tls's %s holds no PEM block", key)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return cert
	}
	installed := render("a.example.test", Prior{})
	moved := render("b.example.test", Prior{Documents: applied(installed), Traces: installed.Traces})
	if err := certificate(moved, "tls.crt").CheckSignatureFrom(certificate(moved, "ca.crt")); err != nil {
		t.Errorf("the host changed: the certificate does not verify against the CA beside it: %v", err)
	}
}

// Certificates a chart generates once and reads back with lookup (the fixture certs-lookup: as
// elasticsearch's chart keeps its transport certificate, and a CA read back with
// buildCustomCert to sign another, as many charts keep the CA of their webhooks) are generated
// for real: what the rendering holds verifies, however many lookup rounds it took, and later
// plans keep them.
func TestRenderStable_aCertificateLookedUpOrGeneratedIsGeneratedForReal(t *testing.T) {
	l := loadFixture(t, "certs-lookup")
	cluster := newFakeCluster()
	render := func(prior Prior) *Rendered {
		t.Helper()
		rendered, err := RenderStable(context.Background(), l, nil,
			RenderOptions{ReleaseName: "web", Namespace: "review-x", Seed: testSeed, Lookup: cluster}, prior)
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		return rendered
	}
	verifies := func(r *Rendered, name, caSecret, caKey string) {
		t.Helper()
		if err := secretCertificate(t, r, name, "tls.crt").CheckSignatureFrom(secretCertificate(t, r, caSecret, caKey)); err != nil {
			t.Errorf("Secret %s's certificate does not verify against the CA of %s: %v", name, caSecret, err)
		}
	}
	installed := render(Prior{})
	verifies(installed, "web-certs", "web-certs", "ca.crt")
	// The CA read back with buildCustomCert signs the certificate beside it.
	verifies(installed, "web-api-tls", "web-ca", "tls.crt")
	if names := objectNames(installed.Generated); !slices.Contains(names, "Secret/web-certs") || !slices.Contains(names, "Secret/web-api-tls") {
		t.Errorf("the install draws the certificates, which its plan cannot show: Generated = %v", names)
	}
	cluster.apply(installed, "review-x")
	next := render(Prior{Documents: applied(installed), Traces: installed.Traces, StandIns: installed.StandIns})
	for _, name := range []string{"web-certs", "web-ca", "web-api-tls"} {
		if got := secretData(t, next, name, "tls.crt"); got != secretData(t, installed, name, "tls.crt") {
			t.Errorf("the plan after the install draws Secret %s anew", name)
		}
	}
	if len(next.Generated) > 0 {
		t.Errorf("the plan after the install draws anew: %v", objectNames(next.Generated))
	}
	// Without the record of what stood in for the CA, the certificate the CA read back signs is
	// drawn from the CA itself, where the install drew it from the CA it generated: drawn anew,
	// signed by the kept CA.
	unrecorded := render(Prior{Documents: applied(installed), Traces: installed.Traces})
	verifies(unrecorded, "web-api-tls", "web-ca", "tls.crt")
	if names := objectNames(unrecorded.Generated); !slices.Equal(names, []string{"Secret/web-api-tls"}) {
		t.Errorf("without stand-ins the plan after the install draws anew %v, want the certificate signed by the CA read back alone", names)
	}
	// The apply of that plan records the stand-ins again: the plan after it keeps them too.
	cluster.apply(next, "review-x")
	after := render(Prior{Documents: applied(next), Traces: next.Traces, StandIns: next.StandIns})
	if len(after.Generated) > 0 || secretData(t, after, "web-api-tls", "tls.crt") != secretData(t, installed, "web-api-tls", "tls.crt") {
		t.Errorf("the plan after that apply draws anew: %v", objectNames(after.Generated))
	}
}

// A stabilized rendering that would apply a stand-in is refused as a whole: RenderStable's
// last check. A chart reaches one only in a way its renderings do not follow; a value given in
// holds one here, in the ConfigMap beside the certificates.
func TestRenderStable_refusesARenderingLeftHoldingAStandIn(t *testing.T) {
	level := "genSignedCert:" + strings.Repeat("0a", 16)
	_, err := RenderStable(context.Background(), loadFixture(t, "certs-lookup"), map[string]any{"level": level},
		RenderOptions{ReleaseName: "web", Namespace: "review-x", Seed: testSeed, Lookup: newFakeCluster()}, Prior{})
	var left *PlaceholderLeftError
	if !errors.As(err, &left) || left.Object != "ConfigMap/web-config" || !slices.Equal(left.Functions, []string{"genSignedCert"}) {
		t.Errorf("got %v, want the ConfigMap and genSignedCert named", err)
	}
}

// A rendering holding what a traced rendering writes in place of a key, certificate or hash
// (as it is, or base64-encoded once or twice as Secret data holds it) is refused, naming the
// object and the functions; real values, digests and the functions' names in text are not.
func TestNoPlaceholderLeft_refusesWhatStandsForAGeneratedValue(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	secret := func(value string) manifest.Object {
		return manifest.Object{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "tls"}, "data": map[string]any{"tls.crt": value}}
	}
	placeholder := "Cert genSignedCert:" + strings.Repeat("0a", 16)
	for _, value := range []string{placeholder, b64(placeholder), b64(b64(placeholder)), b64("htpasswd:" + strings.Repeat("f", 32))} {
		err := noPlaceholderLeft([]manifest.Object{secret(b64("real")), secret(value)})
		var left *PlaceholderLeftError
		if !errors.As(err, &left) || left.Object != "Secret/tls" || len(left.Functions) != 1 {
			t.Errorf("%q: got %v, want the Secret and its one function named", value, err)
		}
	}
	installed := render(t, loadFixture(t, "zoo-webhook"), Values{}, RenderOptions{ReleaseName: "web", Namespace: "review-x"})
	for _, value := range []string{b64(secretData(t, installed, "web-webhook-tls", "tls.crt")), "sha256:" + strings.Repeat("0a", 32), "genCA and genSignedCert draw"} {
		if err := noPlaceholderLeft([]manifest.Object{secret(value)}); err != nil {
			t.Errorf("%q: %v", value, err)
		}
	}
}
