package chart

import (
	"encoding/base64"
	"slices"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/draw"
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
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			draws = append(draws, g.known(draw.PlaceholderDraws(v))...)
			if decoded, err := base64.StdEncoding.DecodeString(v); err == nil {
				draws = append(draws, g.known(draw.PlaceholderDraws(string(decoded)))...)
			}
		case map[string]any:
			for k, e := range v {
				walk(k)
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(traced)
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
