package drift

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Rules say which of a release's live fields are not drift, beyond what [Rules.Project] never
// compares (fields the chart does not set, maps it leaves empty):
//
//   - Fields whose current manager is one of BuiltinManagers: the API server's built-in
//     controllers decide them. The HorizontalPodAutoscaler controller, for one, writes the
//     replicas of what it scales as kube-controller-manager through the scale subresource.
//   - spec.replicas of an object that a HorizontalPodAutoscaler of the release targets, whoever
//     wrote it last.
//   - A caBundle the chart leaves empty (injectedCABundles): a controller injects the
//     certificate authority of a webhook or an aggregated API at run time, whoever wrote it.
//   - What the user's Ignore rules name: JSON pointers, or every field of named managers.
//
// Any other manager's change to a field the chart sets is drift, whatever the manager is
// called.
type Rules struct {
	Ignore []Ignore
	// scaled are the "Kind/name" of the objects an autoscaler of the release targets.
	scaled map[string]bool
}

// BuiltinManagers are the field managers of the built-in controllers.
var BuiltinManagers = []string{"kube-controller-manager", "kube-scheduler"}

// replicasPointer is the field a HorizontalPodAutoscaler decides.
const replicasPointer = "/spec/replicas"

// Ignore names fields that are not drift, as Argo CD's ignoreDifferences does: in the objects
// of Kind (any kind when empty) named Name (any name when empty), the fields at JSONPointers
// and every field that one of Managers owns.
type Ignore struct {
	Kind         string
	Name         string
	JSONPointers []string
	Managers     []string
}

// NewRules returns the rules for the objects of a release, desired as its manifest has them.
func NewRules(ignore []Ignore, desired []map[string]any) Rules {
	r := Rules{Ignore: ignore, scaled: map[string]bool{}}
	for _, obj := range desired {
		if obj["kind"] != "HorizontalPodAutoscaler" {
			continue
		}
		spec, _ := obj["spec"].(map[string]any)
		target, _ := spec["scaleTargetRef"].(map[string]any)
		kind, _ := target["kind"].(string)
		name, _ := target["name"].(string)
		if kind != "" && name != "" {
			r.scaled[kind+"/"+name] = true
		}
	}
	return r
}

func (r Rules) matching(obj map[string]any) []Ignore {
	kind, _ := obj["kind"].(string)
	metadata, _ := obj["metadata"].(map[string]any)
	name, _ := metadata["name"].(string)
	var out []Ignore
	for _, ig := range r.Ignore {
		if (ig.Kind == "" || ig.Kind == kind) && (ig.Name == "" || ig.Name == name) {
			out = append(out, ig)
		}
	}
	if r.scaled[kind+"/"+name] {
		out = append(out, Ignore{JSONPointers: []string{replicasPointer}})
	}
	if injected := injectedCABundles(obj); len(injected) > 0 {
		out = append(out, Ignore{JSONPointers: injected})
	}
	return out
}

// injectedCABundles returns the JSON pointers of the caBundle fields obj leaves empty ("" or
// null): the certificate authority of an admission webhook, of a CustomResourceDefinition's
// conversion webhook or of an APIService, which a controller writes at run time (Vault's agent
// injector, cert-manager's CA injector, a webhook server that makes its own certificate). What
// it writes there is not drift, and an upgrade leaves it, as Helm 3's three-way merge left it.
// A caBundle the chart sets is the chart's.
func injectedCABundles(obj map[string]any) []string {
	apiVersion, _ := obj["apiVersion"].(string)
	group, _, _ := strings.Cut(apiVersion, "/")
	var out []string
	switch {
	case group == "admissionregistration.k8s.io" && (obj["kind"] == "MutatingWebhookConfiguration" || obj["kind"] == "ValidatingWebhookConfiguration"):
		webhooks, _ := obj["webhooks"].([]any)
		for i, w := range webhooks {
			webhook, _ := w.(map[string]any)
			if emptyCABundle(webhook, "clientConfig") {
				out = append(out, fmt.Sprintf("/webhooks/%d/clientConfig/caBundle", i))
			}
		}
	case group == "apiextensions.k8s.io" && obj["kind"] == "CustomResourceDefinition":
		if emptyCABundle(obj, "spec", "conversion", "webhook", "clientConfig") {
			out = append(out, "/spec/conversion/webhook/clientConfig/caBundle")
		}
	case group == "apiregistration.k8s.io" && obj["kind"] == "APIService":
		if emptyCABundle(obj, "spec") {
			out = append(out, "/spec/caBundle")
		}
	}
	return out
}

// emptyCABundle reports whether the map at path in obj holds a caBundle of "" or null.
func emptyCABundle(obj map[string]any, path ...string) bool {
	v, present, _ := unstructured.NestedFieldNoCopy(obj, append(path, "caBundle")...)
	return present && (v == nil || v == "")
}

// pointersFor returns the ignored paths of obj as JSON pointer tokens.
func (r Rules) pointersFor(obj map[string]any) [][]string {
	var out [][]string
	for _, ig := range r.matching(obj) {
		for _, p := range ig.JSONPointers {
			if tokens, err := pointerTokens(p); err == nil {
				out = append(out, tokens)
			}
		}
	}
	return out
}

// ownedFields returns the field sets of live's ignored managers: the built-in ones and those
// the rules matching desired name.
func (r Rules) ownedFields(desired, live map[string]any) ([]*fieldpath.Set, error) {
	managers := slices.Clone(BuiltinManagers)
	for _, ig := range r.matching(desired) {
		managers = append(managers, ig.Managers...)
	}
	entries, err := managedFieldsOf(live, func(manager string) bool { return slices.Contains(managers, manager) })
	if err != nil {
		return nil, err
	}
	out := make([]*fieldpath.Set, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Fields)
	}
	return out, nil
}

// pointerTokens splits a JSON pointer (RFC 6901) into its unescaped tokens.
func pointerTokens(pointer string) ([]string, error) {
	if !strings.HasPrefix(pointer, "/") {
		return nil, errors.New(`a JSON pointer starts with "/", as in /spec/replicas`)
	}
	tokens := strings.Split(pointer[1:], "/")
	for i, t := range tokens {
		if strings.Contains(strings.NewReplacer("~0", "", "~1", "").Replace(t), "~") {
			return nil, fmt.Errorf(`token %q: "~" is written "~0" and "/" is written "~1"`, t)
		}
		tokens[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(t)
	}
	return tokens, nil
}

// RuleError is an invalid Ignore rule: Field names its attribute ("json_pointers",
// "managers", or "" for the rule as a whole), Index the element of that list.
type RuleError struct {
	Field string
	Index int
	Err   error
}

func (e *RuleError) Error() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%s[%d]: %v", e.Field, e.Index, e.Err)
}

func (e *RuleError) Unwrap() error { return e.Err }

// Validate checks one rule; the errors are *RuleError.
func (ig Ignore) Validate() []error {
	var errs []error
	if len(ig.JSONPointers) == 0 && len(ig.Managers) == 0 {
		errs = append(errs, &RuleError{Err: errors.New("the rule ignores nothing: give json_pointers, managers or both")})
	}
	for i, p := range ig.JSONPointers {
		if p == "/" || p == "" {
			errs = append(errs, &RuleError{Field: "json_pointers", Index: i, Err: errors.New("the pointer names the whole object; name the fields to ignore, as in /spec/replicas")})
			continue
		}
		if _, err := pointerTokens(p); err != nil {
			errs = append(errs, &RuleError{Field: "json_pointers", Index: i, Err: err})
		}
	}
	for i, m := range ig.Managers {
		if strings.TrimSpace(m) == "" {
			errs = append(errs, &RuleError{Field: "managers", Index: i, Err: errors.New("a manager name is the exact name in metadata.managedFields (kubectl get -o yaml --show-managed-fields)")})
		}
	}
	return errs
}
