package chart

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/draw"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// drawGroups joins the draws no seed determines (keys, certificates, bcrypt hashes) that must
// be drawn anew together: a draw and those it was given (a certificate and the CA that signs
// it), and the draws one value holds. A value a template makes from a draw is made in the
// template that holds the draw in a variable, so a value holding no placeholder (a hash, the
// clock) is tied to the draws of its own template's output.
type drawGroups struct {
	// parent is each draw's parent in its group; a group's root is its own parent.
	parent map[string]string
}

// newDrawGroups groups the draws of a traced rendering by what each was given.
func newDrawGroups(given map[string][]string) *drawGroups {
	g := &drawGroups{parent: make(map[string]string, len(given))}
	for d := range given {
		g.parent[d] = d
	}
	for d, from := range given {
		g.join(append([]string{d}, from...))
	}
	return g
}

// root returns the root of d's group.
func (g *drawGroups) root(d string) string {
	for g.parent[d] != d {
		g.parent[d] = g.parent[g.parent[d]]
		d = g.parent[d]
	}
	return d
}

// join puts the known draws among ds in one group.
func (g *drawGroups) join(ds []string) {
	var first string
	for _, d := range ds {
		if _, known := g.parent[d]; !known {
			continue
		}
		if first == "" {
			first = g.root(d)
			continue
		}
		g.parent[g.root(d)] = first
	}
}

// in returns the draws whose placeholders traced (a traced rendering's value) holds, as they
// are or base64-encoded as a Secret's data holds them, and joins them in one group.
func (g *drawGroups) in(traced any) []string {
	if g == nil {
		return nil
	}
	var draws []string
	eachString(traced, func(v string) {
		draws = append(draws, g.known(draw.PlaceholderDraws(v))...)
		if decoded, err := base64.StdEncoding.DecodeString(v); err == nil {
			draws = append(draws, g.known(draw.PlaceholderDraws(string(decoded)))...)
		}
	})
	slices.Sort(draws)
	draws = slices.Compact(draws)
	g.join(draws)
	return draws
}

// known returns the draws of ds that the rendering drew.
func (g *drawGroups) known(ds []string) []string {
	return slices.DeleteFunc(ds, func(d string) bool {
		_, ok := g.parent[d]
		return !ok
	})
}

// noPlaceholderLeft says which of objs holds a placeholder of a function no seed determines
// (draw.UnseededPlaceholders), as it is or base64-encoded once or twice: what a traced
// rendering writes where a key, certificate or hash belongs, which no rendering an apply
// applies may hold. It is the last check of a rendering, so that a chart reaching its generated
// values in a way the renderings do not follow is refused rather than applied with a
// certificate that is not one.
func noPlaceholderLeft(objs []manifest.Object) error {
	for _, obj := range objs {
		var found []string
		eachString(map[string]any(obj), func(text string) {
			for range 3 {
				found = append(found, draw.UnseededPlaceholders(text)...)
				decoded, err := base64.StdEncoding.DecodeString(text)
				if err != nil {
					return
				}
				text = string(decoded)
			}
		})
		if len(found) > 0 {
			slices.Sort(found)
			metadata, _ := obj["metadata"].(map[string]any)
			return &PlaceholderLeftError{Object: fmt.Sprintf("%v/%v", obj["kind"], metadata["name"]), Functions: slices.Compact(found)}
		}
	}
	return nil
}

// PlaceholderLeftError is a rendering that holds, in Object, what stands for a value of
// Functions in a traced rendering instead of a value drawn for it.
type PlaceholderLeftError struct {
	Object    string
	Functions []string
}

func (e *PlaceholderLeftError) Error() string {
	return fmt.Sprintf("%s holds a stand-in for a value of %s, not a value generated for it: the chart reaches a generated key, "+
		"certificate or hash in a way its renderings do not follow, and the apply would write no valid one; pass the value in "+
		"through values or set_sensitive instead", e.Object, strings.Join(e.Functions, ", "))
}

// eachString calls fn with every string of v, a value as YAML decodes it: its scalars and its
// mappings' keys.
func eachString(v any, fn func(string)) {
	switch v := v.(type) {
	case string:
		fn(v)
	case map[string]any:
		for k, e := range v {
			fn(k)
			eachString(e, fn)
		}
	case []any:
		for _, e := range v {
			eachString(e, fn)
		}
	}
}
