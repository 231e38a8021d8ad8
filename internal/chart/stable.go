package chart

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"sigs.k8s.io/yaml"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// sourcePrefix starts the comment Helm writes before every document of a
// release's manifest.
const sourcePrefix = "# Source: "

// Document is one object of a release as Helm recorded it: the template it
// came from and its YAML text.
type Document struct {
	Source string
	Text   string
}

// ReleaseDocuments returns the documents of a release manifest, as Helm
// writes it ("---\n# Source: <template>\n<document>" per object), followed by
// hooks, the release's hooks.
func ReleaseDocuments(releaseManifest string, hooks []Document) []Document {
	var docs []Document
	for _, text := range splitTemplateOutput(releaseManifest) {
		source, rest, found := strings.Cut(text, "\n")
		if !found || !strings.HasPrefix(source, sourcePrefix) {
			continue
		}
		docs = append(docs, Document{Source: strings.TrimPrefix(source, sourcePrefix), Text: rest})
	}
	return append(docs, hooks...)
}

// RenderStable renders l twice. When the two renderings differ, the chart
// generates values (randAlphaNum, uuidv4, genCA, now, a lookup-or-generate
// password): every value that differs is taken from prior, the documents
// the release's last revision applied, where prior has the same object at
// the same place. That keeps a generated password or certificate from one
// revision to the next, and makes a plan of an unchanged release empty.
//
// Objects whose generated values prior does not hold are listed in
// Generated: what they hold is this rendering's draw, and another rendering
// would draw again. NamesGenerated says that a generated value names an
// object. Files holds the stabilized output of every template; [Freeze]
// makes a chart that renders exactly that.
func RenderStable(ctx context.Context, l *Loaded, values map[string]any, o RenderOptions, prior []Document) (*Rendered, error) {
	ch, first, err := renderChart(ctx, l, values, o)
	if err != nil {
		return nil, err
	}
	_, second, err := renderChart(ctx, l, values, o)
	if err != nil {
		return nil, err
	}
	if maps.Equal(first, second) {
		return fromFiles(ch, first)
	}
	s, err := stabilize(first, second, prior)
	if err != nil {
		return nil, fmt.Errorf("render chart %s: %w", ch.Name(), err)
	}
	out, err := fromFiles(ch, s.files)
	if err != nil {
		return nil, err
	}
	// Only what install and upgrade apply counts: test hooks may draw names at will.
	applied := map[string]bool{}
	for _, obj := range slices.Concat(out.Objects, out.Hooks) {
		applied[identity(obj)] = true
	}
	for _, obj := range s.generated {
		if applied[identity(obj)] {
			out.Generated = append(out.Generated, obj)
		}
	}
	out.NamesGenerated = slices.ContainsFunc(s.renamed, func(obj manifest.Object) bool { return applied[identity(obj)] })
	for _, source := range slices.Sorted(maps.Keys(first)) {
		if first[source] != second[source] {
			out.Varying = append(out.Varying, source)
		}
	}
	return out, nil
}

// stabilized is the outcome of stabilize.
type stabilized struct {
	files map[string]string
	// generated are the objects with generated values prior did not hold; renamed, those
	// of them whose name is generated.
	generated, renamed []manifest.Object
}

// documentPlace says where an object is in a chart's output, so that the
// same object is found in another rendering even when its name is generated:
// its template, kind, whether it is a hook, and how many documents of that
// template, kind and hookness come before it.
type documentPlace struct {
	source, kind string
	hook         bool
	n            int
}

// placer numbers documents into documentPlaces in the order they are seen.
type placer map[documentPlace]int

func (p placer) place(source string, obj manifest.Object) documentPlace {
	kind, _ := obj["kind"].(string)
	place := documentPlace{source: source, kind: kind, hook: isHookObject(obj)}
	place.n = p[place]
	p[place]++
	return place
}

// isHookObject reports whether obj carries the helm.sh/hook annotation.
func isHookObject(obj manifest.Object) bool {
	metadata, _ := obj["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	_, ok := annotations["helm.sh/hook"]
	return ok
}

// stabilize returns first with the values that differ from second taken
// from prior.
func stabilize(first, second map[string]string, prior []Document) (*stabilized, error) {
	before := priorObjects(prior)
	out := &stabilized{files: make(map[string]string, len(first))}
	for _, source := range slices.Sorted(maps.Keys(first)) {
		text := first[source]
		if text == second[source] {
			out.files[source] = text
			continue
		}
		merged, err := out.stabilizeFile(source, text, second[source], before)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		out.files[source] = merged
	}
	return out, nil
}

// stabilizeFile stabilizes the output of one template.
func (s *stabilized) stabilizeFile(source, first, second string, before map[documentPlace]manifest.Object) (string, error) {
	firstDocs, secondDocs := splitTemplateOutput(first), splitTemplateOutput(second)
	if len(firstDocs) != len(secondDocs) {
		// Even the number of objects is generated: nothing can be paired.
		objs, err := manifest.SplitDocuments(first)
		s.generated = append(s.generated, objs...)
		s.renamed = append(s.renamed, objs...)
		return first, err
	}
	places := placer{}
	for i, doc := range firstDocs {
		a, err := singleObject(doc)
		if err != nil {
			return "", fmt.Errorf("document %d: %w", i+1, err)
		}
		if a == nil {
			continue
		}
		place := places.place(source, a)
		if doc == secondDocs[i] {
			continue
		}
		b, err := singleObject(secondDocs[i])
		if err != nil {
			return "", fmt.Errorf("document %d: %w", i+1, err)
		}
		prior, hasPrior := before[place]
		merged, complete := takeGenerated(a, b, prior, hasPrior)
		obj, _ := merged.(map[string]any)
		if !complete {
			s.generated = append(s.generated, obj)
			if identity(a) != identity(b) {
				s.renamed = append(s.renamed, obj)
			}
		}
		text, err := yaml.Marshal(obj)
		if err != nil {
			return "", fmt.Errorf("document %d: %w", i+1, err)
		}
		firstDocs[i] = strings.TrimSpace(string(text))
	}
	return strings.Join(firstDocs, "\n---\n"), nil
}

// priorObjects places the objects of prior.
func priorObjects(prior []Document) map[documentPlace]manifest.Object {
	places := placer{}
	out := map[documentPlace]manifest.Object{}
	for _, doc := range prior {
		for _, text := range splitTemplateOutput(doc.Text) {
			obj, err := singleObject(text)
			if err != nil || obj == nil {
				continue // what cannot be read cannot give values
			}
			out[places.place(doc.Source, obj)] = obj
		}
	}
	return out
}

// splitTemplateOutput cuts a template's output into documents as Helm's
// install does (releaseutil.SplitManifests), in their order.
func splitTemplateOutput(text string) []string {
	split := releaseutil.SplitManifests(text)
	keys := slices.Collect(maps.Keys(split))
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	docs := make([]string, len(keys))
	for i, k := range keys {
		docs[i] = split[k]
	}
	return docs
}

// singleObject parses one document; nil means it holds nothing (comments).
func singleObject(doc string) (manifest.Object, error) {
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// identity names obj by its API version, kind, namespace and name.
func identity(obj manifest.Object) string {
	metadata, _ := obj["metadata"].(map[string]any)
	return fmt.Sprintf("%v %v %v/%v", obj["apiVersion"], obj["kind"], metadata["namespace"], metadata["name"])
}

// takeGenerated returns a with every value that differs between a and b, two
// renderings of the same inputs, replaced by prior's value at the same path.
// complete is false when a generated value has no counterpart in prior, so
// the result keeps a's.
func takeGenerated(a, b, prior any, hasPrior bool) (merged any, complete bool) {
	if reflect.DeepEqual(a, b) {
		return a, true
	}
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			priorMap, _ := prior.(map[string]any)
			out := make(map[string]any, len(av))
			complete = true
			for k, elem := range av {
				other, inB := bv[k]
				p, inPrior := priorMap[k]
				if !inB {
					// A generated key: only prior's own keys are kept from prior.
					out[k] = elem
					complete = false
					continue
				}
				var c bool
				out[k], c = takeGenerated(elem, other, p, inPrior)
				complete = complete && c
			}
			return out, complete
		}
	case []any:
		if bv, ok := b.([]any); ok && len(av) == len(bv) {
			priorList, _ := prior.([]any)
			out := make([]any, len(av))
			complete = true
			for i := range av {
				var p any
				inPrior := i < len(priorList) && len(priorList) == len(av)
				if inPrior {
					p = priorList[i]
				}
				var c bool
				out[i], c = takeGenerated(av[i], bv[i], p, inPrior)
				complete = complete && c
			}
			return out, complete
		}
	}
	if hasPrior {
		return prior, true
	}
	return a, false
}
