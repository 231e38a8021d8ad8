package validate

import (
	"fmt"
	"regexp"
	"strconv"
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
}

// FieldError is one field of an object that its schema refuses.
type FieldError struct {
	// Path is the field path, e.g. ".spec.template.spec.contianers".
	Path string
	// Message says what is wrong, e.g. "field not declared in schema".
	Message string
}

// IsError reports whether the finding would make the apply fail; otherwise it is a warning.
func (f Finding) IsError() bool {
	return f.Problem != DeprecatedAPI
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

// Check checks objs for Kubernetes target and returns what it found, in the order of objs.
// An object whose API version is not served is not checked further. A zero target (the
// version is not known) checks fields only.
func Check(objs []Object, target Version) []Finding {
	crds := crdSchemas(objs)
	var findings []Finding
	for _, o := range objs {
		apiVersion, _ := o.Object["apiVersion"].(string)
		kind, _ := o.Object["kind"].(string)
		base := Finding{Key: o.Key, Source: o.Source, APIVersion: apiVersion, Kind: kind}
		if crds.defines(apiVersion, kind) {
			if fields := crds.check(o.Object); len(fields) > 0 {
				f := base
				f.Problem, f.Fields = InvalidField, fields
				findings = append(findings, f)
			}
			continue
		}
		lc, known := LifecycleOf(apiVersion, kind)
		if known && !target.IsZero() {
			if problem := lc.problemAt(target); problem != "" {
				f := base
				f.Problem, f.Lifecycle = problem, &lc
				findings = append(findings, f)
				if f.IsError() {
					continue
				}
			}
		}
		if fields := checkBuiltin(o.Object); len(fields) > 0 {
			f := base
			f.Problem, f.Fields = InvalidField, fields
			findings = append(findings, f)
		}
	}
	return findings
}
