package draw

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"maps"
	"slices"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"
	"golang.org/x/crypto/bcrypt"
)

var (
	seedA = []byte("seed-a-0123456789abcdef0123456789")
	seedB = []byte("seed-b-0123456789abcdef0123456789")
)

// execute renders text with sprig's functions, r's replacing the drawing ones.
func execute(t *testing.T, r *Rendering, text string, data any) string {
	t.Helper()
	funcs := sprig.TxtFuncMap()
	maps.Copy(funcs, r.Funcs())
	tpl, err := template.New("t").Funcs(funcs).Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := tpl.Execute(&out, data); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

const seededTemplate = `{{ randAlphaNum 16 }} {{ randAlphaNum 16 }} {{ randAlpha 8 }} {{ randNumeric 6 }} {{ randAscii 5 }} {{ randBytes 4 }} {{ randInt 1 1000 }} {{ uuidv4 }} {{ shuffle "abcdefgh" }}`

func TestRendering_seededDrawsFollowTheSeed(t *testing.T) {
	s := NewSession(time.Now())
	first := execute(t, s.Rendering(seedA, Applied), seededTemplate, nil)
	again := execute(t, NewSession(time.Now()).Rendering(seedA, Traced), seededTemplate, nil)
	other := execute(t, s.Rendering(seedB, Applied), seededTemplate, nil)
	if first != again {
		t.Errorf("one seed drew differently:\n%s\n%s", first, again)
	}
	if first == other {
		t.Errorf("two seeds drew alike: %s", first)
	}
	fields := strings.Fields(first)
	if fields[0] == fields[1] {
		t.Errorf("two calls of one rendering drew alike: %s", first)
	}
	if len(fields[0]) != 16 || len(fields[2]) != 8 || len(fields[3]) != 6 || strings.Trim(fields[3], "0123456789") != "" {
		t.Errorf("drawn strings have the wrong form: %s", first)
	}
	if len(fields[7]) != 36 || fields[7][14] != '4' {
		t.Errorf("uuidv4 %q is not a version 4 UUID", fields[7])
	}
}

func TestRendering_aCallDependsOnItsArguments(t *testing.T) {
	const text = `{{ htpasswd "admin" .password }}|{{ randAlphaNum 24 }}`
	before := execute(t, NewSession(time.Now()).Rendering(seedA, Traced), text, map[string]any{"password": "one"})
	same := execute(t, NewSession(time.Now()).Rendering(seedA, Traced), text, map[string]any{"password": "one"})
	after := execute(t, NewSession(time.Now()).Rendering(seedA, Traced), text, map[string]any{"password": "two"})
	if before != same {
		t.Errorf("a traced rendering is not a function of its inputs:\n%s\n%s", before, same)
	}
	b, a := strings.Split(before, "|"), strings.Split(after, "|")
	if b[0] == a[0] {
		t.Errorf("htpasswd's trace did not change with its password: %s", b[0])
	}
	if b[1] != a[1] {
		t.Errorf("a draw with unchanged arguments changed: %s -> %s", b[1], a[1])
	}
}

func TestRendering_unseededDrawsOncePerSession(t *testing.T) {
	const text = `{{ $ca := genCA "ca" 30 }}{{ $cert := genSignedCert "a.example.test" nil nil 30 $ca }}{{ $ca.Cert }}{{ $cert.Cert }}{{ htpasswd "admin" "secret" }}`
	s := NewSession(time.Now())
	r := s.Rendering(seedA, Applied)
	first := execute(t, r, text, nil)
	if !r.Unseeded() {
		t.Error("a rendering calling genCA does not say it drew without the seed")
	}
	if again := execute(t, s.Rendering(seedA, Applied), text, nil); again != first {
		t.Error("one session drew two different certificates for one call")
	}
	if other := execute(t, NewSession(time.Now()).Rendering(seedA, Applied), text, nil); other == first {
		t.Error("two sessions drew one certificate")
	}
	block, rest := pem.Decode([]byte(first))
	if block == nil {
		t.Fatalf("no certificate in %q", first)
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		t.Fatal(err)
	}
	block, rest = pem.Decode(rest)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "a.example.test" {
		t.Errorf("signed certificate names %q", cert.Subject.CommonName)
	}
	user, hash, _ := strings.Cut(strings.TrimSpace(string(rest)), ":")
	if user != "admin" || bcrypt.CompareHashAndPassword([]byte(hash), []byte("secret")) != nil {
		t.Errorf("htpasswd %q does not verify the password", rest)
	}
}

func TestRendering_tracedPlaceholdersFollowTheirArguments(t *testing.T) {
	const text = `{{ $ca := genCA "ca" 30 }}{{ $cert := genSignedCert .host nil nil 30 $ca }}{{ $ca.Cert }}|{{ $cert.Cert }}|{{ $cert.Key }}|{{ now | unixEpoch }}`
	render := func(seed []byte, host string) []string {
		r := NewSession(time.Now()).Rendering(seed, Traced)
		out := strings.Split(execute(t, r, text, map[string]any{"host": host}), "|")
		if !r.Unseeded() {
			t.Error("a traced rendering calling genCA does not say so")
		}
		return out
	}
	a, again, b, other := render(seedA, "a.example.test"), render(seedA, "a.example.test"), render(seedA, "b.example.test"), render(seedB, "a.example.test")
	if strings.Join(a, "|") != strings.Join(again, "|") {
		t.Errorf("traced placeholders differ for one seed and input:\n%v\n%v", a, again)
	}
	if a[0] != b[0] || a[1] == b[1] || a[2] == b[2] {
		t.Errorf("a host change should change the signed certificate and its key, not the CA:\n%v\n%v", a, b)
	}
	for i := range a {
		if a[i] == other[i] {
			t.Errorf("traced value %d is the same under another seed: %s", i, a[i])
		}
	}
}

func TestRendering_clockIsTheSessions(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	r := NewSession(now).Rendering(seedA, Applied)
	if got := execute(t, r, `{{ now | unixEpoch }} {{ ago (now) }}`, nil); got != "1796205600 0s" {
		t.Errorf("got %q", got)
	}
	if !r.Unseeded() {
		t.Error("reading the clock is not reported")
	}
}

func TestRendering_apartChangesOnlyWhatNoSeedDetermines(t *testing.T) {
	const text = `{{ randAlphaNum 8 }}|{{ (genCA "ca" 30).Cert }}|{{ now | unixEpoch }}`
	plain := strings.Split(execute(t, NewSession(time.Now()).Rendering(seedA, Traced), text, nil), "|")
	apart := strings.Split(execute(t, NewSession(time.Now()).Rendering(seedA, Traced).Apart(seedB), text, nil), "|")
	if plain[0] != apart[0] {
		t.Errorf("a seeded draw changed with Apart: %s -> %s", plain[0], apart[0])
	}
	if plain[1] == apart[1] || plain[2] == apart[2] {
		t.Errorf("a certificate or the clock did not change with Apart: %v, %v", plain, apart)
	}
}

// The functions a rendering replaces are exactly those Seeded, Unseeded, Clock and ReadingDrawn
// name: what tells a chart that draws from one that does not (chart's mayDraw) reads the first
// three lists.
func TestFuncs_areTheNamedOnes(t *testing.T) {
	got := slices.Sorted(maps.Keys(NewSession(time.Now()).Rendering(seedA, Traced).Funcs()))
	want := slices.Sorted(slices.Values(slices.Concat(Seeded, Unseeded, Clock, ReadingDrawn)))
	if !slices.Equal(got, want) {
		t.Errorf("Funcs replaces %q, the lists name %q", got, want)
	}
}

// buildCustomCert given back what a rendering drew: in Traced mode a stand-in is passed
// through, a certificate and key whose stand-ins the session holds both become those stand-ins,
// and anything else, as every call in Applied mode, is parsed by the real function.
func TestRendering_customCertReadsBackWhatStoodIn(t *testing.T) {
	const drawCA = `{{ $ca := genCA "ca" 30 }}{{ $ca.Cert | b64enc }}|{{ $ca.Key | b64enc }}`
	const readCA = `{{ $ca := buildCustomCert .cert .key }}{{ $ca.Cert }}|{{ $ca.Key }}`
	applied := strings.Split(execute(t, NewSession(time.Now()).Rendering(seedA, Applied), drawCA, nil), "|")
	tracing := NewSession(time.Now()).Rendering(seedA, Traced)
	traced := strings.Split(execute(t, tracing, drawCA, nil), "|")
	calls := tracing.Calls()
	if len(calls) != 1 {
		t.Fatalf("one call traced, got %v", calls)
	}
	decode := func(s string) string {
		out, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	realCert, realKey := decode(applied[0]), decode(applied[1])
	standIns := func(texts ...string) map[string]StandIn {
		in := map[string]StandIn{}
		for _, text := range texts {
			field := map[string]string{realCert: "Cert", realKey: "Key"}[text]
			for _, call := range calls {
				in[StandInKey(text)] = StandIn{Field: field, Call: call}
			}
		}
		return in
	}
	read := func(mode Mode, in map[string]StandIn, cert, key string) []string {
		s := NewSession(time.Now()).UseStandIns(in)
		return strings.Split(execute(t, s.Rendering(seedA, mode), readCA, map[string]any{"cert": cert, "key": key}), "|")
	}
	if got := read(Traced, nil, traced[0], traced[1]); got[0] != decode(traced[0]) || got[1] != decode(traced[1]) {
		t.Errorf("a stand-in given back is not passed through: %q, want %q", got, []string{decode(traced[0]), decode(traced[1])})
	}
	if got := read(Traced, standIns(realCert, realKey), applied[0], applied[1]); got[0] != decode(traced[0]) || got[1] != decode(traced[1]) {
		t.Errorf("a drawn CA whose stand-ins the session holds reads back as %q, want its stand-ins %q", got, []string{decode(traced[0]), decode(traced[1])})
	}
	for name, in := range map[string]map[string]StandIn{"none": nil, "the certificate's alone": standIns(realCert), "the key's alone": standIns(realKey)} {
		if got := read(Traced, in, applied[0], applied[1]); got[0] != realCert || got[1] != realKey {
			t.Errorf("with %s stand-in held, a drawn CA is not parsed by the real function: %q", name, got)
		}
	}
	if got := read(Applied, standIns(realCert, realKey), applied[0], applied[1]); got[0] != realCert || got[1] != realKey {
		t.Errorf("in Applied mode the CA is not parsed by the real function: %q", got)
	}
}

// What Traced mode writes in place of one result reads back as its field and draw; text
// around a placeholder, or a placeholder of another form, does not.
func TestParsePlaceholder_readsWhatTracedModeWrites(t *testing.T) {
	tracing := NewSession(time.Now()).Rendering(seedA, Traced)
	out := strings.Split(execute(t, tracing, `{{ $ca := genCA "ca" 30 }}{{ $ca.Cert }}|{{ htpasswd "u" "p" }}`, nil), "|")
	for i, want := range []string{"Cert", ""} {
		field, drawn, ok := ParsePlaceholder(out[i])
		if _, traced := tracing.Calls()[drawn]; !ok || field != want || !traced {
			t.Errorf("%q reads as (%q, %q, %v), want field %q and a traced draw", out[i], field, drawn, ok, want)
		}
	}
	for _, text := range []string{"", "x " + out[1], out[1] + "\n", "Cert genCA:0a", "Cert  " + out[1], "tls.crt " + out[1]} {
		if _, _, ok := ParsePlaceholder(text); ok {
			t.Errorf("%q reads as a placeholder", text)
		}
	}
}
