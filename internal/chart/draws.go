package chart

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"maps"
	"slices"
	"text/template"
	"time"

	helmchart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/draw"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// maxLookupRounds bounds the renderings that lay a rendering's own objects over what lookup
// finds: a chart that looks up what it renders settles in two, and one that renders an object
// only while lookup does not find it never settles.
const maxLookupRounds = 4

// drawing is what the renderings of one plan or apply share: the draws no seed determines,
// the release's seed, and what lookup read from the cluster.
type drawing struct {
	session *draw.Session
	seed    []byte
	// reproducible says that seed is the release's own, so another plan or apply draws alike.
	reproducible bool
	lookups      *lookups
}

// newDrawing returns the drawing of o: o.Seed, or a seed drawn for this call alone.
func newDrawing(o RenderOptions) *drawing {
	d := &drawing{session: draw.NewSession(time.Now()), seed: o.Seed, reproducible: len(o.Seed) > 0, lookups: newLookups(o.Lookup, o.Namespace)}
	if !d.reproducible {
		d.seed = make([]byte, 32)
		_, _ = rand.Read(d.seed) // never fails
	}
	return d
}

// probe returns a seed that draws differently from d's, to find what is drawn.
func (d *drawing) probe() []byte {
	mac := hmac.New(sha256.New, d.seed)
	mac.Write([]byte("probe"))
	return mac.Sum(nil)
}

// drawingNames are the template functions through which renderings with different seeds can
// differ: those that draw (package draw's Seeded, Unseeded and Clock), and tpl, which renders a
// string of the values as a template and so can call any of them.
var drawingNames = func() map[string]bool {
	names := map[string]bool{"tpl": true}
	for _, name := range slices.Concat(draw.Seeded, draw.Unseeded, draw.Clock) {
		names[name] = true
	}
	return names
}()

// mayDraw reports whether a template of ch, or of a chart it depends on, holds one of
// drawingNames as a word (letters, digits and underscores between other characters), anywhere
// in its text: a function a template calls is named in it so. When none does, no rendering of
// ch calls a function that draws, and the seed changes nothing of it.
func mayDraw(ch *helmchart.Chart) bool {
	for _, f := range ch.Templates {
		if hasWordOf(f.Data, drawingNames) {
			return true
		}
	}
	return slices.ContainsFunc(ch.Dependencies(), mayDraw)
}

// hasWordOf reports whether a word of text is in words.
func hasWordOf(text []byte, words map[string]bool) bool {
	isWord := func(c byte) bool {
		return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	for i := 0; i < len(text); {
		if !isWord(text[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(text) && isWord(text[j]) {
			j++
		}
		if words[string(text[i:j])] {
			return true
		}
		i = j
	}
	return false
}

// pass is one chart rendered to its fixed point.
type pass struct {
	chart *helmchart.Chart
	files map[string]string
	// unseeded says that a template called a function no seed determines (keys, certificates,
	// bcrypt, the clock), in any round.
	unseeded bool
	// given are the draws no seed determines of the last round, traced, and what each was
	// given (draw.Rendering.Given); empty when drawn for real.
	given map[string][]string
	// calls are the calls of every round's placeholders by draw (draw.Rendering.Calls): a
	// round may copy what an earlier one drew.
	calls map[string]string
	// overlay are the objects laid over what lookup finds in the last round.
	overlay []manifest.Object
}

// toFixedPoint renders l with values, drawing from seed in mode, and answers lookup as the
// cluster will answer once the rendering is applied: when a template looked up an object the
// rendering itself applies, it renders again with that object laid over the cluster's, until
// every lookup finds what the rendering applies (at most maxLookupRounds). So an install
// applies what the next plan renders: a chart that reads a Secret it generated back with lookup
// renders the same way after it is applied.
func (d *drawing) toFixedPoint(ctx context.Context, l *Loaded, values map[string]any, o RenderOptions, newRendering func() *draw.Rendering) (*pass, error) {
	var overlay []manifest.Object
	// What a round draws reaches the next through lookup (a certificate generated once, then
	// read back from the Secret it is written to): the last round holds what no seed determines
	// when any round drew it, though it may call no function that draws.
	unseeded, calls := false, map[string]string{}
	for round := 1; ; round++ {
		r, look := newRendering(), d.lookups.round(overlay)
		ch, files, err := renderChart(ctx, l, values, o, d.funcs(ctx, r, look))
		if err != nil {
			return nil, err
		}
		unseeded = unseeded || r.Unseeded()
		maps.Copy(calls, r.Calls())
		p := &pass{chart: ch, files: files, unseeded: unseeded, given: r.Given(), calls: maps.Clone(calls), overlay: overlay}
		if !look.asked() || round == maxLookupRounds {
			return p, nil
		}
		next := appliedObjects(files)
		if look.sameWith(ctx, next) {
			return p, nil
		}
		overlay = next
	}
}

// again renders l with other values as p was rendered, with the same seed and lookup answers;
// what no seed determines is traced, not drawn: a comparison needs no real key.
func (d *drawing) again(ctx context.Context, l *Loaded, values map[string]any, o RenderOptions, p *pass) (*Rendered, error) {
	ch, files, err := renderChart(ctx, l, values, o, d.funcs(ctx, d.session.Rendering(d.seed, draw.Traced), d.lookups.round(p.overlay)))
	if err != nil {
		return nil, err
	}
	return fromFiles(ch, files)
}

// funcs are the template functions of one rendering.
func (d *drawing) funcs(ctx context.Context, r *draw.Rendering, look *lookupRound) template.FuncMap {
	funcs := r.Funcs()
	funcs["lookup"] = look.fn(ctx)
	return funcs
}

// appliedObjects returns the objects of files that install and upgrade apply (no hooks), for
// lookup to find; what cannot be read is left out.
func appliedObjects(files map[string]string) []manifest.Object {
	var objs []manifest.Object
	for _, source := range slices.Sorted(maps.Keys(files)) {
		for _, text := range splitTemplateOutput(files[source]) {
			obj, err := singleObject(text)
			if err != nil || obj == nil || isHookObject(obj) {
				continue
			}
			objs = append(objs, obj)
		}
	}
	return objs
}
