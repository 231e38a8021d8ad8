package chart

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"helm.sh/helm/v4/pkg/chart/common"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"
)

// fuzzFunctions are template functions a chart applies to a value; PREV is the value so far.
var fuzzFunctions = []string{
	`PREV | urlquery`,
	`PREV | b64enc`,
	`PREV | toJson`,
	`PREV | quote`,
	`PREV | squote`,
	`PREV | upper`,
	`PREV | lower`,
	`PREV | trunc 10`,
	`printf "postgres://app:%s@db/app" PREV`,
	`printf "%s-suffix" PREV`,
	`PREV | replace "a" "4"`,
	`PREV | sha256sum`,
	`PREV | sha1sum`,
	`PREV | b32enc`,
	`PREV | title`,
	`PREV | html`,
	`PREV | js`,
	`dict "password" PREV | toJson`,
	`list "user" PREV | join ":"`,
	`PREV | substr 0 6`,
	`PREV | abbrev 8`,
	`PREV | nospace`,
	`PREV | toYaml`,
	`PREV | b64enc | b64enc`,
	`cat "token" PREV`,
	`PREV | adler32sum`,
	`PREV | snakecase`,
	`PREV | reverse`,
}

// fuzzChart is a chart with one ConfigMap holding each step of a chain of functions applied
// to .Values.secret, and one value that does not depend on it.
func fuzzChart(chain []string) *Loaded {
	var tpl strings.Builder
	tpl.WriteString("{{- $s0 := .Values.secret }}\n")
	for i, fn := range chain {
		fmt.Fprintf(&tpl, "{{- $s%d := %s }}\n", i+1, strings.ReplaceAll(fn, "PREV", fmt.Sprintf("$s%d", i)))
	}
	tpl.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fuzz\ndata:\n  plain: not derived\n")
	for i := range chain {
		fmt.Fprintf(&tpl, "  s%d: {{ $s%d | toString | toJson }}\n", i+1, i+1)
	}
	ch := &helmchart.Chart{
		Metadata:  &helmchart.Metadata{APIVersion: "v2", Name: "fuzz", Version: "0.1.0"},
		Templates: []*common.File{{Name: "templates/cm.yaml", Data: []byte(tpl.String())}},
		Values:    map[string]any{},
	}
	return &Loaded{Chart: ch, Version: "0.1.0"}
}

// FuzzRedactStable renders random values through random chains of one to three template
// functions and checks that neither the value nor any step of the chain shows in the
// redacted manifests or gets through the error redactor.
func FuzzRedactStable(f *testing.F) {
	for _, seed := range []struct {
		value   string
		a, b, c uint8
		n       uint8
	}{
		{strongPassword, 0, 0, 0, 1},
		{`p&ss w/rd+100%`, 2, 3, 0, 2},
		{`Tr0ub&dor`, 8, 0, 1, 3},
		{`&&&&&&&&x`, 7, 0, 0, 1},
		{`日本語のパスワード12`, 5, 11, 0, 2},
		{`"quoted\back'slash"`, 2, 4, 5, 3},
		{`a`, 11, 0, 0, 1},
		{`correct horse battery staple`, 23, 19, 6, 3},
		{`---\nyaml: [doc]`, 22, 0, 0, 1},
	} {
		f.Add(seed.value, seed.a, seed.b, seed.c, seed.n)
	}
	f.Fuzz(func(t *testing.T, value string, a, b, c, n uint8) {
		if !utf8.ValidString(value) || strings.TrimSpace(value) == "" || len(value) > 64 || strings.ContainsRune(value, 0) {
			t.Skip("not a value a user sets")
		}
		chain := []string{fuzzFunctions[int(a)%len(fuzzFunctions)], fuzzFunctions[int(b)%len(fuzzFunctions)], fuzzFunctions[int(c)%len(fuzzFunctions)]}[:1+int(n)%3]
		checkFuzzChain(t, value, chain)
	})
}

func checkFuzzChain(t *testing.T, value string, chain []string) {
	l := fuzzChart(chain)
	o := RenderOptions{ReleaseName: "web", Namespace: "review-x"}
	red := RedactionOptions{Namespace: "review-x", Key: []byte("fuzz")}
	out, err := renderRedacted(context.Background(), l, Values{SetSensitive: map[string]string{"secret": value}}, o, red)
	if err != nil {
		if len(value) >= 4 && strings.Contains(err.Error(), value) {
			t.Fatalf("chain %q: the error shows the value: %v", chain, err)
		}
		return
	}
	// The forms the chain produced: the value and every step, from the unredacted rendering.
	forms := []string{value}
	data, _ := out.Rendered.Objects[0]["data"].(map[string]any)
	for i := range chain {
		if s, ok := data[fmt.Sprintf("s%d", i+1)].(string); ok {
			forms = append(forms, s)
		}
	}
	// What shows whatever the value (a chart's own text) is no form of it.
	control, err := renderRedacted(context.Background(), l, Values{SetSensitive: map[string]string{"secret": strings.Repeat("Z", len(value))}}, o, red)
	if err != nil {
		t.Fatalf("chain %q: control rendering: %v", chain, err)
	}
	shown := joinManifests(out.Manifests)
	controlShown := joinManifests(control.Manifests)
	if !strings.Contains(shown, "plain: not derived") {
		t.Fatalf("chain %q: a value that does not depend on the secret was redacted:\n%s", chain, shown)
	}
	for i, form := range forms {
		if len(form) < 6 || strings.Contains(controlShown, form) {
			continue
		}
		if strings.Contains(shown, form) {
			t.Fatalf("chain %q, value %q: step %d (%q) shows in the manifests:\n%s", chain, value, i, form, shown)
		}
		if msg := out.Redactor.String("error: " + form + " is invalid"); strings.Contains(msg, form) {
			t.Fatalf("chain %q, value %q: step %d (%q) gets through the error redactor: %s", chain, value, i, form, msg)
		}
	}
}
