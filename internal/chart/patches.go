package chart

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/patch"
)

// patchFiles applies patches to the objects of the templates' output, hooks and test hooks
// included, as a post-renderer would see them, and returns the output with every file that
// holds a patched object written again (manifest.RenderRewritable, which Helm's parsing keeps as
// it is). Files no patch selects keep their text. Rendering the output again as a frozen chart
// (Freeze) therefore gives the patched objects, so Helm applies what the plan showed.
func patchFiles(files map[string]string, patches *patch.Set, namespace string) (map[string]string, error) {
	if patches == nil {
		return files, nil
	}
	var objs []manifest.Object
	var owners []string
	for _, file := range slices.Sorted(maps.Keys(files)) {
		if !holdsObjects(file, files[file]) {
			continue
		}
		docs, err := manifest.SplitDocuments(files[file])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		objs = append(objs, docs...)
		owners = append(owners, slices.Repeat([]string{file}, len(docs))...)
	}
	patched, selected, err := patches.Apply(objs, namespace)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(files)
	rewrite := map[string]*strings.Builder{}
	for i, file := range owners {
		if selected[i] && rewrite[file] == nil {
			rewrite[file] = &strings.Builder{}
		}
	}
	for i, file := range owners {
		b := rewrite[file]
		if b == nil || patched[i] == nil {
			continue
		}
		doc, err := manifest.RenderRewritable(patched[i])
		if err != nil {
			return nil, fmt.Errorf("%s: write the patched object: %w", file, err)
		}
		fmt.Fprintf(b, "---\n%s", doc)
	}
	for file, b := range rewrite {
		out[file] = b.String()
	}
	return out, nil
}

// holdsObjects says whether Helm reads objects from a template's output: not a partial, the
// notes, or an empty file.
func holdsObjects(file, text string) bool {
	base := path.Base(file)
	return !strings.HasPrefix(base, "_") && !strings.HasSuffix(base, notesFileSuffix) && strings.TrimSpace(text) != ""
}
