package helmrelease

import (
	"bytes"
	"fmt"
	"strings"

	"helm.sh/helm/v4/pkg/postrenderer"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

var _ postrenderer.PostRenderer = (*PlanCheck)(nil)

// PlanCheck is a Helm post-renderer that lets an install or upgrade go ahead only when Helm
// renders exactly the manifests the plan showed. Helm calls it after rendering and before
// it writes anything to the cluster, so a chart that renders differently at apply (random
// values, timestamps, lookups that now find something) fails without touching the cluster.
//
// Helm 4 calls it once with the release's hooks and once with its objects (see
// postRenderStrategy), each time with a stream it has parsed and written again, and parses
// what the post-renderer returns once more. Some YAML does not survive that unchanged (a
// block scalar kept to the end of a document, aliases between a List's items: helm#32203);
// chart.Freeze writes templates holding it as the objects Kubernetes reads from them, and the
// check reads the stream as Kubernetes reads YAML, aliases between documents included, and
// hands the objects back as manifest.RenderRewritable writes them, which Helm's parsing keeps
// as they are.
type PlanCheck struct {
	// Planned maps the key of every object and hook Helm is expected to render (CRDs are
	// not part of Helm's stream) to the manifest the plan showed.
	Planned map[string]string
	// Manifests turns the objects of one of Helm's streams (its hooks, or its other objects)
	// into manifests keyed and redacted the way the plan's are, with the rendering's own for
	// those the stream does not hold.
	Manifests func(objs []manifest.Object) (map[string]string, error)
}

// PlanMismatchError names the first object whose applied manifest is not the planned one.
// Diff compares redacted manifests, so it never holds a sensitive value.
type PlanMismatchError struct {
	Object string
	// Change is "changed", "not in the plan" or "missing at apply".
	Change string
	Diff   string
}

func (e *PlanMismatchError) Error() string {
	msg := fmt.Sprintf("%s rendered at apply differs from the plan (%s)", e.Object, e.Change)
	if e.Diff != "" {
		msg += ":\n" + e.Diff
	}
	return msg
}

// Run returns the objects of rendered (manifest.RenderRewritable), each with Helm's filename
// annotation, or a *PlanMismatchError.
func (p *PlanCheck) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	objs, err := manifest.SplitAliasedDocuments(rendered.String())
	if err != nil {
		return nil, fmt.Errorf("read the manifests Helm rendered: %w", err)
	}
	filenames := make([]string, len(objs))
	for i, obj := range objs {
		filenames[i] = takeFilename(obj)
	}
	got, err := p.Manifests(objs)
	if err != nil {
		return nil, fmt.Errorf("read the manifests Helm rendered: %w", err)
	}
	if err := ComparePlanned(p.Planned, got); err != nil {
		return nil, err
	}
	out := &bytes.Buffer{}
	for i, obj := range objs {
		if filenames[i] != "" {
			setAnnotation(obj, filenameAnnotation, filenames[i])
		}
		doc, err := manifest.RenderRewritable(obj)
		if err != nil {
			return nil, fmt.Errorf("write the manifests Helm rendered: %w", err)
		}
		fmt.Fprintf(out, "---\n%s", doc)
	}
	return out, nil
}

// filenameAnnotation is the annotation Helm 4 puts on every object it hands a post-renderer,
// naming the template the object came from, and removes from what the post-renderer returns.
const filenameAnnotation = "postrenderer.helm.sh/postrender-filename"

// takeFilename removes Helm's filename annotation from obj, and the annotations if it leaves
// them empty, leaving the object as the chart rendered it; it returns the file named.
func takeFilename(obj manifest.Object) string {
	metadata, _ := obj["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	filename, ok := annotations[filenameAnnotation].(string)
	if !ok {
		return ""
	}
	delete(annotations, filenameAnnotation)
	if len(annotations) == 0 {
		delete(metadata, "annotations")
	}
	return filename
}

// setAnnotation sets one annotation of obj, which has metadata.
func setAnnotation(obj manifest.Object, key, value string) {
	metadata, _ := obj["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
		metadata["annotations"] = annotations
	}
	annotations[key] = value
}

// ComparePlanned returns a *PlanMismatchError for the first object, in key order, whose
// manifest differs between planned and applied, or nil when they are the same.
func ComparePlanned(planned, applied map[string]string) error {
	changes := manifest.DiffManifests(planned, applied)
	if len(changes) == 0 {
		return nil
	}
	c := changes[0]
	switch c.Action {
	case manifest.ActionAdd:
		return &PlanMismatchError{Object: c.Key, Change: "not in the plan"}
	case manifest.ActionDelete:
		return &PlanMismatchError{Object: c.Key, Change: "missing at apply"}
	default:
		return &PlanMismatchError{Object: c.Key, Change: "changed", Diff: strings.TrimRight(c.UnifiedDiff, "\n")}
	}
}
