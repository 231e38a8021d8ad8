package environment

import (
	"fmt"
	"strings"
)

// Step is one step of a [Path]: an attribute name, a map key or a list index.
type Step struct {
	// Attribute is the attribute's name, or "" for a map key or list index.
	Attribute string
	// MapKey is the key of a map element, when IsMapKey.
	MapKey   string
	IsMapKey bool
	// Index is the position of a list element, when IsIndex.
	Index   int
	IsIndex bool
}

// Path locates a value in the configuration, in the attribute names of the
// Terraform resource, e.g. resource_quota["requests.cpu"].
type Path []Step

// Attr returns a path of one attribute.
func Attr(name string) Path { return Path{{Attribute: name}} }

// Attr appends an attribute name.
func (p Path) Attr(name string) Path { return p.with(Step{Attribute: name}) }

// Key appends a map key.
func (p Path) Key(key string) Path { return p.with(Step{MapKey: key, IsMapKey: true}) }

// Index appends a list index.
func (p Path) Index(i int) Path { return p.with(Step{Index: i, IsIndex: true}) }

func (p Path) with(s Step) Path {
	out := make(Path, len(p), len(p)+1)
	copy(out, p)
	return append(out, s)
}

// String prints the path the way Terraform prints attribute paths.
func (p Path) String() string {
	var b strings.Builder
	for _, s := range p {
		switch {
		case s.IsMapKey:
			fmt.Fprintf(&b, "[%q]", s.MapKey)
		case s.IsIndex:
			fmt.Fprintf(&b, "[%d]", s.Index)
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Attribute)
		}
	}
	return b.String()
}

// Problem is one thing wrong with a [Spec].
type Problem struct {
	// Path is the attribute at fault.
	Path Path
	// Detail says what is wrong and what is allowed, in full sentences.
	Detail string
}

func (p Problem) Error() string { return p.Path.String() + ": " + p.Detail }

// Problems collects the problems of one spec.
type Problems []Problem

func (ps *Problems) add(path Path, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Detail: fmt.Sprintf(format, args...)})
}
