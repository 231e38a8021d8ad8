package drift

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A caBundle the chart leaves empty is the controller's that injects it: what it writes there
// never shows as drift and an upgrade leaves it out. One the chart sets is the chart's, and so
// is the field of a kind of another group that only shares the name.
func TestRules_injectedCABundles(t *testing.T) {
	const injected, other, absent = "SU5KRUNURUQ=", "T1RIRVI=", "absent"
	const validating = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: policy}
webhooks:
- {name: a.example.com, clientConfig: {CA url: "https://a.example.com"}}
`
	tests := []struct {
		name string
		// object is the object's YAML, each CA in it the caBundle field with its value.
		object string
		// desired, previous and live are the caBundle values as the chart renders it now, as
		// the previous revision rendered it (desired's when empty) and as it is live; shown is
		// the projection's, yield what an upgrade applies, whole what a definition applied whole
		// (crds/ under create_replace) sends (absent: no caBundle field).
		desired, previous, live, shown, yield, whole []string
	}{
		{
			name: "webhooks, one left empty and one the chart sets",
			object: `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: injector}
webhooks:
- {name: a.example.com, clientConfig: {CA service: {name: a, namespace: ns}}}
- {name: b.example.com, clientConfig: {CA service: {name: b, namespace: ns}}}
`,
			desired: []string{`""`, "Q0E="},
			live:    []string{injected, other},
			shown:   []string{`""`, other},
			yield:   []string{absent, "Q0E="},
			whole:   []string{absent, "Q0E="},
		},
		{
			name:    "a validating webhook's caBundle left null",
			object:  validating,
			desired: []string{"null"}, live: []string{injected}, shown: []string{"null"}, yield: []string{absent}, whole: []string{absent},
		},
		{
			name: "a definition's conversion webhook",
			object: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec: {group: example.com, conversion: {strategy: Webhook, webhook: {clientConfig: {CA url: "https://a.example.com"}}}}
`,
			desired: []string{`""`}, live: []string{injected}, shown: []string{`""`}, yield: []string{absent}, whole: []string{absent},
		},
		{
			name: "an APIService",
			object: `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.example.com}
spec: {CA group: metrics.example.com}
`,
			desired: []string{`""`}, live: []string{injected}, shown: []string{`""`}, yield: []string{absent}, whole: []string{absent},
		},
		{
			name: "a kind of another group that shares the name",
			object: `apiVersion: example.com/v1
kind: APIService
metadata: {name: mine}
spec: {CA group: mine.example.com}
`,
			desired: []string{`""`}, live: []string{other}, shown: []string{other}, yield: []string{`""`}, whole: []string{`""`},
		},
		{
			// The user emptied it in this revision: the apply clears it, as the plan shows. Applied
			// whole, the field is left out, which clears it too where only the release set it.
			name:    "a caBundle the chart set in the previous revision and leaves empty now",
			object:  validating,
			desired: []string{`""`}, previous: []string{"Q0E="}, live: []string{"Q0E="}, shown: []string{`""`}, yield: []string{`""`},
			whole: []string{absent},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			with := func(values []string) map[string]any {
				text := tt.object
				for _, v := range values {
					field := "caBundle: " + v + ", "
					if v == absent {
						field = ""
					}
					text = strings.Replace(text, "CA ", field, 1)
				}
				return parseYAML(t, text)
			}
			desired, previous, live := with(tt.desired), with(tt.desired), with(tt.live)
			if tt.previous != nil {
				previous = with(tt.previous)
			}
			rules := NewRules(nil, []map[string]any{desired})
			if diff := cmp.Diff(with(tt.shown), rules.Project(desired, live)); diff != "" {
				t.Errorf("projection (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(with(tt.yield), rules.Yield(desired, previous, live)); diff != "" {
				t.Errorf("yield (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(with(tt.whole), WithoutInjectedCABundles(desired)); diff != "" {
				t.Errorf("applied whole (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(with(tt.desired), desired); diff != "" {
				t.Errorf("the rendering was changed (-want +got):\n%s", diff)
			}
		})
	}
}
