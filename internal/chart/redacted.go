package chart

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/parallel"
)

// RedactionOptions says how RedactStable hides what a rendering derives from sensitive values.
type RedactionOptions struct {
	// Namespace is the release's namespace, for the manifests' keys.
	Namespace string
	// Sensitive are further values to hide that are not chart values (a repository password).
	Sensitive []string
	// Key keys the markers (see manifest.NewRedactor); nil gives markers without a hash.
	Key []byte
	// IsNamespaced says whether a kind is namespaced; nil means manifest.BuiltinIsNamespaced.
	IsNamespaced func(apiVersion, kind string) bool
}

// RedactedRendering is a chart rendered for a plan or an apply, with everything derived from
// its sensitive values redacted.
type RedactedRendering struct {
	Rendered *Rendered
	// Values are the merged values the chart was rendered with: the real ones.
	Values map[string]any
	// Manifests are the redacted manifests by key, as chart.Manifests gives them.
	Manifests map[string]string
	// Derived is what the rendering derived from the sensitive values; nil when there are none.
	Derived *manifest.Derived
	// Redactor hides the sensitive values and what was derived from them: use it on every
	// error message and log line about the release.
	Redactor *manifest.Redactor
}

// ErrRedaction is wrapped by the errors of RedactStable that come from the comparison with
// substituted values rather than from the chart itself.
var ErrRedaction = errors.New("cannot tell what the chart derives from its sensitive values")

// RedactStable redacts rendered, a rendering of l with values v made by RenderStable, without
// knowing the chart's template functions: it renders again with every sensitive input
// (set_sensitive values, the leaves of sensitive documents) replaced by another value of the
// same length and character classes, twice with different substitutes, and every scalar or key
// that comes out differently is derived from a sensitive input and replaced whole by a marker
// (see manifest.FindDerived). Every object is compared, those with generated values too: a
// value kept from the last revision is then hidden where a fresh draw differs from it, so a
// generated value that mixes in a sensitive one never shows. Where the structure of the
// rendering changes with the sensitive values, or the chart fails to render with the
// substitutes, the error wraps ErrRedaction: nothing is shown rather than something that may
// be a secret. Markers are HMACs keyed with red.Key, or "(sensitive value)" alone without a
// key (see manifest.NewRedactor).
// A template error is redacted by RedactRenderError.
func RedactStable(ctx context.Context, l *Loaded, v Values, o RenderOptions, rendered *Rendered, red RedactionOptions) (*RedactedRendering, error) {
	values, err := MergeValues(v)
	if err != nil {
		return nil, err
	}
	inputs := v.SensitiveInputs()
	literal := append(slices.Clone(inputs), red.Sensitive...)
	out := &RedactedRendering{Rendered: rendered, Values: values}
	if len(inputs) > 0 {
		if out.Derived, err = findDerived(ctx, l, v, o, rendered, nil); err != nil {
			return nil, err
		}
	}
	out.Redactor = manifest.NewRedactor(literal, red.Key, out.Derived)
	if out.Manifests, err = out.manifests(rendered, red); err != nil {
		return nil, err
	}
	return out, nil
}

// findDerived renders with each round of substitutes and compares.
func findDerived(ctx context.Context, l *Loaded, v Values, o RenderOptions, real, same *Rendered) (*manifest.Derived, error) {
	var sameObjects []manifest.Object
	if same != nil {
		sameObjects = same.allObjects()
	}
	// The rounds' renderings are independent, each on one core: they run at once.
	renderings := make([]*Rendered, substitutionRounds)
	errs := make([]error, substitutionRounds)
	parallel.Each(substitutionRounds, substitutionRounds, func(round int) {
		values, err := mergeValues(v, round)
		if err == nil {
			renderings[round], err = real.again(ctx, l, values, o)
		}
		errs[round] = err
	})
	var alternates [][]manifest.Object
	for round, err := range errs {
		if err == nil {
			alternates = append(alternates, renderings[round].allObjects())
			continue
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		if round == 0 {
			// The message is the substitutes', not the real values'.
			return nil, fmt.Errorf("%w: the chart fails to render when they are replaced by other values of the same length and characters "+
				"(does a template check their form?): %v", ErrRedaction, err)
		}
		// The second round also swaps punctuation, which a chart may refuse; the first suffices.
	}
	derived, err := manifest.FindDerived(real.allObjects(), sameObjects, alternates[0])
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRedaction, err)
	}
	if len(alternates) > 1 {
		if all, err := manifest.FindDerived(real.allObjects(), sameObjects, alternates...); err == nil {
			derived = all
		}
	}
	return derived, nil
}

// RedactRenderError returns the message of err, an error of rendering l with values v, with
// what the sensitive inputs put into it hidden: the chart is rendered again with substitutes
// for them (as RedactStable does), and what differs from the substitutes' errors came from
// them, whatever form the template gave it (a fail message quoting a value upper-cased or
// URL-escaped). Where a rendering with the substitutes succeeds, the failure itself depends on
// the values and nothing of the message that differs can be told apart. redactor then hides
// what it knows (the literal values and their encodings).
func RedactRenderError(ctx context.Context, l *Loaded, v Values, o RenderOptions, err error, redactor *manifest.Redactor) string {
	message := err.Error()
	if len(v.SetSensitive) == 0 && len(v.SensitiveDocuments) == 0 {
		return redactor.String(message)
	}
	var alternates []string
	for round := range substitutionRounds {
		values, mergeErr := mergeValues(v, round)
		if mergeErr != nil {
			continue
		}
		if _, altErr := Render(ctx, l, values, o); altErr != nil {
			alternates = append(alternates, altErr.Error())
		} else {
			alternates = append(alternates, "")
		}
	}
	if len(alternates) == 0 {
		// Nothing to compare with: show no more than that the rendering failed.
		return "the chart failed to render; its message is not shown, as the values it would quote could not be told apart"
	}
	return redactor.String(manifest.RedactDifferences(message, alternates...))
}

// ManifestsError is an error of RedactStable about the rendered objects themselves (two
// objects with one key, an object without a name), not about the templates.
type ManifestsError struct{ Err error }

func (e *ManifestsError) Error() string { return e.Err.Error() }
func (e *ManifestsError) Unwrap() error { return e.Err }

// manifests returns the redacted manifests of r.
func (out *RedactedRendering) manifests(r *Rendered, red RedactionOptions) (map[string]string, error) {
	manifests, err := RedactedManifests(r, red.Namespace, out.Redactor, red.IsNamespaced)
	if err != nil {
		return nil, &ManifestsError{Err: err}
	}
	return manifests, nil
}

// ObjectDigests returns a keyed digest of each unredacted object by its key in Manifests (see
// manifest.Redactor.ObjectDigests).
func (out *RedactedRendering) ObjectDigests(key []byte, red RedactionOptions) (map[string]string, error) {
	return out.ObjectDigestsOf(key, red, nil)
}

// ObjectDigestsOf is ObjectDigests of the objects whose keys wanted accepts, all of them when
// wanted is nil (see manifest.Redactor.ObjectDigestsOf).
func (out *RedactedRendering) ObjectDigestsOf(key []byte, red RedactionOptions, wanted func(key string) bool) (map[string]string, error) {
	return out.Redactor.ObjectDigestsOf(out.Rendered.allObjects(), red.Namespace, red.IsNamespaced, key, wanted)
}

// PostRenderedManifests returns the redacted manifests of the objects of one of the streams
// Helm 4 hands a post-renderer (its hooks, or its other objects), with the rendering's own
// objects, hooks and CRDs for those the stream does not hold, redacted as the rendering's
// manifests are. Test hooks and hooks of events Helm skips, which the rendering leaves out,
// are left out of the stream's.
func (out *RedactedRendering) PostRenderedManifests(objs []manifest.Object, red RedactionOptions) (map[string]string, error) {
	var objects, hooks []manifest.Object
	for _, obj := range objs {
		switch {
		case !isHookObject(obj):
			objects = append(objects, obj)
		case isInstallHookObject(obj):
			hooks = append(hooks, obj)
		}
	}
	streamed := &Rendered{Objects: objects, Hooks: hooks, TestHooks: out.Rendered.TestHooks, CRDs: out.Rendered.CRDs}
	if len(objects) == 0 {
		streamed.Objects = out.Rendered.Objects
	}
	if len(hooks) == 0 {
		streamed.Hooks = out.Rendered.Hooks
	}
	return out.manifests(streamed, red)
}

// again renders l with values as r was rendered: with the same seed and lookup answers, so
// that only what values change differs. A rendering not made by RenderStable is rendered
// afresh.
func (r *Rendered) again(ctx context.Context, l *Loaded, values map[string]any, o RenderOptions) (*Rendered, error) {
	if r.drawing == nil {
		return Render(ctx, l, values, o)
	}
	return r.drawing.again(ctx, l, values, o, r.pass)
}

// allObjects returns the CRDs, objects and hooks of r, in that order.
func (r *Rendered) allObjects() []manifest.Object {
	objs := make([]manifest.Object, 0, len(r.CRDs)+len(r.Objects)+len(r.Hooks))
	objs = append(objs, r.CRDs...)
	objs = append(objs, r.Objects...)
	return append(objs, r.Hooks...)
}
