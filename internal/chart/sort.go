package chart

import (
	"encoding/json"
	"maps"
	pathpkg "path"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	release "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/parallel"
)

// sortManifests is Helm's releaseutil.SortManifests of files in InstallOrder, with the
// templates' documents read on every core, and each parsed once. Helm reads the files in the
// order of their paths and each file's documents in order, keeps hooks and objects in that
// order, then sorts both by kind, stably. Here each document is handed to Helm's SortManifests
// alone, under its file's path, and their results are put back in that order and sorted as
// Helm sorts them, so the result is Helm's to the item. The error is the first document's that
// has one, as Helm stops at the first.
//
// Helm parses the whole of each document for the fields that tell hooks from objects (its
// apiVersion, kind, name and annotations), and the rendering parses it again for its objects:
// a quarter of a large rendering's time. So each document is parsed here for its objects
// (objects[i] are those of manifests[i], as manifest.SplitDocuments reads its content and a
// newline, and objectErrs[i] why it does not parse), and Helm is handed only those fields,
// written as JSON, when they are all strings; otherwise Helm reads the document itself. A
// document whose fields are all strings and that is not a hook, most of a chart, is not
// handed to Helm at all: its manifest is the one Helm's sort makes of such a document, its
// head built from those fields (genericHead).
func sortManifests(files map[string]string) (hooks []*release.Hook, manifests []releaseutil.Manifest, objects [][]manifest.Object, objectErrs []error, err error) {
	type document struct{ path, text string }
	var docs []document
	for _, path := range slices.Sorted(maps.Keys(files)) {
		for _, text := range splitTemplateOutput(files[path]) {
			docs = append(docs, document{path: path, text: text})
		}
	}
	// A manifest keeps its document's parsed objects through the sort.
	type entry struct {
		manifest  releaseutil.Manifest
		objects   []manifest.Object
		objectErr error
	}
	type sorted struct {
		hooks   []*release.Hook
		entries []entry
		err     error
	}
	each := make([]sorted, len(docs))
	parallel.Chunks(len(docs), func(start, end int) {
		for i := start; i < end; i++ {
			objs, tops, parseErr := manifest.SplitDocumentsAndTops(docs[i].text + "\n")
			head := docs[i].text
			if fields, ok := helmHeadFields(tops, parseErr); ok {
				if simple, generic := genericHead(fields, docs[i].path); generic {
					// Not a hook: Helm's sort would make a manifest of its head and nothing else.
					m := releaseutil.Manifest{Name: docs[i].path, Content: docs[i].text, Head: simple}
					each[i] = sorted{entries: []entry{{manifest: m, objects: objs, objectErr: parseErr}}}
					continue
				}
				if text, encoded := helmHead(fields); encoded {
					head = text
				}
			}
			hooks, manifests, err := releaseutil.SortManifests(map[string]string{docs[i].path: head}, nil, releaseutil.InstallOrder)
			for _, h := range hooks {
				h.Manifest = docs[i].text
			}
			each[i] = sorted{hooks: hooks, err: err}
			for _, m := range manifests {
				m.Content = docs[i].text
				each[i].entries = append(each[i].entries, entry{manifest: m, objects: objs, objectErr: parseErr})
			}
		}
	})
	var entries []entry
	for _, s := range each {
		if s.err != nil {
			return nil, nil, nil, nil, s.err
		}
		hooks, entries = append(hooks, s.hooks...), append(entries, s.entries...)
	}
	sort.SliceStable(hooks, func(i, j int) bool { return installsBefore(hooks[i].Kind, hooks[j].Kind) })
	sort.SliceStable(entries, func(i, j int) bool {
		return installsBefore(entries[i].manifest.Head.Kind, entries[j].manifest.Head.Kind)
	})
	for _, e := range entries {
		manifests, objects, objectErrs = append(manifests, e.manifest), append(objects, e.objects), append(objectErrs, e.objectErr)
	}
	return hooks, manifests, objects, objectErrs, nil
}

// headFields are the fields of a document Helm reads to sort it (releaseutil.SimpleHead), and
// of its metadata.
var headFields, headMetadataFields = []string{"apiVersion", "kind", "metadata"}, []string{"name", "annotations"}

// helmHead writes the head fields helmHeadFields found as a JSON document, which Helm reads
// exactly as it reads the whole document.
func helmHead(head map[string]any) (string, bool) {
	var text strings.Builder
	enc := json.NewEncoder(&text)
	enc.SetEscapeHTML(false)
	if enc.Encode(head) != nil {
		return "", false
	}
	return text.String(), true
}

// helmHeadFields returns the fields of the one document of tops that Helm reads to sort it:
// only when the document parsed (parseErr is nil) into one mapping whose head fields are
// strings, a mapping of strings for the annotations, and named only as Helm names them (Helm's
// decoder also matches other cases).
func helmHeadFields(tops []any, parseErr error) (map[string]any, bool) {
	if parseErr != nil || len(tops) != 1 {
		return nil, false
	}
	top, _ := tops[0].(map[string]any)
	head, ok := pick(top, headFields)
	if !ok {
		return nil, false
	}
	if metadata, present := head["metadata"]; present {
		m, isMap := metadata.(map[string]any)
		if !isMap {
			return nil, false
		}
		if head["metadata"], ok = pick(m, headMetadataFields); !ok {
			return nil, false
		}
	}
	for _, field := range []string{"apiVersion", "kind"} {
		if v, present := head[field]; present && !isString(v) {
			return nil, false
		}
	}
	if m, present := head["metadata"].(map[string]any); present {
		if v, named := m["name"]; named && !isString(v) {
			return nil, false
		}
		if a, annotated := m["annotations"]; annotated && a != nil {
			annotations, isMap := a.(map[string]any)
			if !isMap {
				return nil, false
			}
			for _, v := range annotations {
				if !isString(v) {
					return nil, false
				}
			}
		}
	}
	return head, true
}

// genericHead returns the head Helm's sort reads from the fields helmHeadFields found, and
// true when Helm would make of the document at path one manifest and no hook: the
// document is not in a partial's file (Helm skips those) and has no hook annotation. Helm
// would read the head exactly as built here: the fields are plain strings, named as Helm
// names them, and a mapping of strings for the annotations.
func genericHead(fields map[string]any, path string) (*releaseutil.SimpleHead, bool) {
	if strings.HasPrefix(pathpkg.Base(path), "_") {
		return nil, false
	}
	head := &releaseutil.SimpleHead{}
	head.Version, _ = fields["apiVersion"].(string)
	head.Kind, _ = fields["kind"].(string)
	metadata, present := fields["metadata"].(map[string]any)
	if !present {
		return head, true
	}
	head.Metadata = &struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	}{}
	head.Metadata.Name, _ = metadata["name"].(string)
	if annotations, annotated := metadata["annotations"].(map[string]any); annotated {
		if _, hook := annotations[release.HookAnnotation]; hook {
			return nil, false
		}
		head.Metadata.Annotations = make(map[string]string, len(annotations))
		for k, v := range annotations {
			head.Metadata.Annotations[k], _ = v.(string)
		}
	}
	return head, true
}

// pick returns the fields of m named in fields; false when m names one of them in another
// case, or is nil.
func pick(m map[string]any, fields []string) (map[string]any, bool) {
	if m == nil {
		return nil, false
	}
	out := make(map[string]any, len(fields))
	for k, v := range m {
		for _, f := range fields {
			switch {
			case k == f:
				out[k] = v
			case strings.EqualFold(k, f):
				return nil, false
			}
		}
	}
	return out, true
}

// isString reports whether v is a string that JSON writes as YAML reads it back: valid UTF-8
// without the characters JSON leaves as they are and YAML refuses unescaped (DEL, the C1
// controls, the byte order mark and U+FFFE, U+FFFF).
func isString(v any) bool {
	s, ok := v.(string)
	if !ok || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0xfeff || r == 0xfffe || r == 0xffff {
			return false
		}
	}
	return true
}

// installRank is each kind's place in Helm's InstallOrder, the last place where a kind is listed
// twice, as Helm ranks them.
var installRank = func() map[string]int {
	rank := make(map[string]int, len(releaseutil.InstallOrder))
	for i, kind := range releaseutil.InstallOrder {
		rank[kind] = i
	}
	return rank
}()

// installsBefore is Helm's order of kinds (releaseutil's lessByKind over InstallOrder): kinds
// it ranks by their rank, before every kind it does not know, which go by name.
func installsBefore(a, b string) bool {
	rankA, knownA := installRank[a]
	rankB, knownB := installRank[b]
	switch {
	case !knownA && !knownB:
		return a < b
	case !knownA:
		return false
	case !knownB:
		return true
	}
	return rankA < rankB
}
