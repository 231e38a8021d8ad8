package validate

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Object is one rendered object to check.
type Object struct {
	// Key names the object in findings, e.g. the manifest key "Deployment.apps/web".
	Key string
	// Source is the chart file the object was rendered from ("web/templates/deployment.yaml");
	// empty when unknown.
	Source string
	// Object is the object as rendered, in the shape of unstructured.Unstructured.Object.
	Object map[string]any
}

// Problem says what kind of finding a Finding is.
type Problem string

const (
	// RemovedAPI: the target version does not serve the object's apiVersion and kind.
	RemovedAPI Problem = "removed"
	// NotYetServedAPI: the API version was introduced after the target version.
	NotYetServedAPI Problem = "not-yet-served"
	// DeprecatedAPI: the target version serves the API version but has deprecated it.
	DeprecatedAPI Problem = "deprecated"
	// InvalidField: a field is not in the kind's schema or has the wrong type.
	InvalidField Problem = "invalid-field"
)

// Finding is one problem found in one object.
type Finding struct {
	Problem Problem
	// Key and Source are the object's, as given.
	Key    string
	Source string
	// APIVersion and Kind are the object's.
	APIVersion string
	Kind       string
	// Lifecycle is set for API findings.
	Lifecycle *Lifecycle
	// Fields lists, for InvalidField, each offending field path and what is wrong with it.
	Fields []FieldError
	// Schema says, for InvalidField, which schema refused the fields.
	Schema SchemaSource
	// Uncertain is set, for InvalidField, when every field is one the schema does not declare
	// and the schema is the shipped one of a Kubernetes version older than the target: the
	// fields may be ones the target added, so the finding is a warning.
	Uncertain bool
}

// SchemaSource names the schema an object's fields were checked against.
type SchemaSource string

const (
	// ShippedSchema is the schema of the built-in kinds client-go ships, of the Kubernetes
	// version of the libraries the provider is built with ([LibraryVersion]).
	ShippedSchema SchemaSource = "shipped"
	// ClusterSchema is the API server's own, from its OpenAPI v3 documents ([ServerSchema]).
	ClusterSchema SchemaSource = "cluster"
	// ChartCRDSchema is the schema of a CustomResourceDefinition among the objects checked.
	ChartCRDSchema SchemaSource = "chart-crd"
	// DefinitionSchema is the schema of a CustomResourceDefinition given in Options.Definitions.
	DefinitionSchema SchemaSource = "definition"
)

// FieldError is one field of an object that its schema refuses.
type FieldError struct {
	// Path is the field path, e.g. ".spec.template.spec.contianers".
	Path string
	// Message says what is wrong, e.g. "field not declared in schema".
	Message string
	// Null is set when what is wrong is a null where the schema wants a value: a key the
	// template leaves empty. A server-side apply refuses it; a create drops it.
	Null bool
}

// IsError reports whether the finding would make the apply fail; otherwise it is a warning.
func (f Finding) IsError() bool {
	return f.Problem != DeprecatedAPI && !f.Uncertain
}

// Version is a Kubernetes major.minor version.
type Version struct {
	Major, Minor int
}

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// IsZero reports whether v is unset.
func (v Version) IsZero() bool { return v.Major == 0 && v.Minor == 0 }

// AtLeast reports whether v is o or newer.
func (v Version) AtLeast(o Version) bool {
	return v.Major > o.Major || (v.Major == o.Major && v.Minor >= o.Minor)
}

var versionPattern = regexp.MustCompile(`^v?(\d+)\.(\d+)`)

// ParseVersion reads the major and minor version of a Kubernetes version string such as
// "v1.37.2", "1.30" or "v1.29.4-gke.100".
func ParseVersion(s string) (Version, error) {
	m := versionPattern.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("kubernetes version %q: expected major.minor, such as v1.37.2", s)
	}
	major, err := strconv.Atoi(m[1])
	if err != nil {
		return Version{}, fmt.Errorf("kubernetes version %q: %w", s, err)
	}
	minor, err := strconv.Atoi(m[2])
	if err != nil {
		return Version{}, fmt.Errorf("kubernetes version %q: %w", s, err)
	}
	return Version{Major: major, Minor: minor}, nil
}

// Options says what Check checks against.
type Options struct {
	// Target is the Kubernetes version the objects are for; zero (not known) checks fields only.
	Target Version
	// Server holds the schemas the cluster's API server publishes, by group version. Objects
	// of the kinds they define are checked against them rather than the shipped schema. Nil
	// when there is no cluster to ask.
	Server map[schema.GroupVersion]*ServerSchema
	// Definitions are CustomResourceDefinitions the objects rely on that something else
	// installs before them (another release's crds). Custom resources of their kinds are checked
	// against them rather than the server's schema, which may be older or missing; a definition
	// among the objects checked still comes first. They are not checked themselves.
	Definitions []Object

	// fields holds, once Prepared, the server's field check of each kind of the objects it was
	// prepared for; a kind without one is checked against the shipped schema.
	fields map[schema.GroupVersionKind]func(obj map[string]any) []FieldError
}

// Prepared returns opts made ready to check objs: of each server schema, the definitions the
// objects' kinds reach are parsed (ServerSchema). A group version whose schema cannot be built
// is left out, so its objects are checked against the shipped schema, and errs say why. Check
// prepares opts itself when they are not.
func (opts Options) Prepared(objs []Object) (Options, []error) {
	gvks := make([]schema.GroupVersionKind, 0, len(objs))
	for _, o := range objs {
		apiVersion, _ := o.Object["apiVersion"].(string)
		kind, _ := o.Object["kind"].(string)
		if gv, err := schema.ParseGroupVersion(apiVersion); err == nil {
			gvks = append(gvks, gv.WithKind(kind))
		}
	}
	return opts.PreparedFor(gvks)
}

// PreparedFor is Prepared for objects of gvks. Each server schema keeps the check it builds
// for a set of kinds, so objects of the same kinds prepared later find it built.
func (opts Options) PreparedFor(gvks []schema.GroupVersionKind) (Options, []error) {
	kinds := map[schema.GroupVersion][]schema.GroupVersionKind{}
	for _, gvk := range gvks {
		gv := gvk.GroupVersion()
		if !opts.Server[gv].Defines(gvk) {
			continue
		}
		kinds[gv] = append(kinds[gv], gvk)
	}
	opts.fields = map[schema.GroupVersionKind]func(map[string]any) []FieldError{}
	var errs []error
	for _, gv := range slices.SortedFunc(maps.Keys(kinds), func(a, b schema.GroupVersion) int { return strings.Compare(a.String(), b.String()) }) {
		check, err := opts.Server[gv].checker(kinds[gv])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", gv, err))
			continue
		}
		for _, gvk := range kinds[gv] {
			opts.fields[gvk] = check
		}
	}
	return opts, errs
}

// Check checks objs and returns what it found, in the order of objs. An object whose API
// version the target does not serve is not checked further. A custom resource whose
// definition is among objs is checked against that definition; any other object against the
// server's schema of its kind when there is one, else the shipped schema of built-in kinds.
// Between the two, a custom resource of a kind opts.Definitions defines is checked against
// that definition.
func Check(objs []Object, opts Options) []Finding {
	if opts.fields == nil {
		opts, _ = opts.Prepared(objs)
	}
	own, given := crdSchemas(objs), crdSchemas(opts.Definitions)
	var findings []Finding
	for _, o := range objs {
		apiVersion, _ := o.Object["apiVersion"].(string)
		kind, _ := o.Object["kind"].(string)
		base := Finding{Key: o.Key, Source: o.Source, APIVersion: apiVersion, Kind: kind}
		if crds, source, ok := definitionFor(apiVersion, kind, own, given); ok {
			if fields := crds.check(o.Object); len(fields) > 0 {
				f := base
				f.Problem, f.Fields, f.Schema = InvalidField, fields, source
				findings = append(findings, f)
			}
			continue
		}
		lc, known := LifecycleOf(apiVersion, kind)
		if known && !opts.Target.IsZero() {
			if problem := lc.problemAt(opts.Target); problem != "" {
				f := base
				f.Problem, f.Lifecycle = problem, &lc
				findings = append(findings, f)
				if f.IsError() {
					continue
				}
			}
		}
		if f, ok := checkFields(base, o.Object, opts); ok {
			findings = append(findings, f)
		}
	}
	return findings
}

// definitionFor returns the set of CustomResourceDefinitions that defines a kind, and which
// schema that is: the objects' own, else the given ones.
func definitionFor(apiVersion, kind string, own, given crdSet) (crdSet, SchemaSource, bool) {
	switch {
	case own.defines(apiVersion, kind):
		return own, ChartCRDSchema, true
	case given.defines(apiVersion, kind):
		return given, DefinitionSchema, true
	}
	return nil, "", false
}

// checkFields checks obj against the server's schema of its kind, else the shipped one.
func checkFields(base Finding, obj map[string]any, opts Options) (Finding, bool) {
	f := base
	f.Problem = InvalidField
	gv, err := schema.ParseGroupVersion(base.APIVersion)
	if check := opts.fields[gv.WithKind(base.Kind)]; err == nil && check != nil {
		f.Fields, f.Schema = check(obj), ClusterSchema
		return f, len(f.Fields) > 0
	}
	f.Fields, f.Schema = checkBuiltin(obj), ShippedSchema
	f.Uncertain = !opts.Target.IsZero() && !LibraryVersion().AtLeast(opts.Target) && allUndeclared(f.Fields)
	return f, len(f.Fields) > 0
}

// allUndeclared reports whether every field error is of a field the schema does not declare.
func allUndeclared(fields []FieldError) bool {
	for _, fe := range fields {
		if fe.Message != undeclaredField {
			return false
		}
	}
	return true
}

// undeclaredField is structured-merge-diff's message for a field a schema does not declare.
const undeclaredField = "field not declared in schema"
