package helmrelease

import (
	"bytes"
	"fmt"
	"strings"

	"helm.sh/helm/v4/pkg/postrenderer"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

var _ postrenderer.PostRenderer = (*PlanCheck)(nil)

// PlanCheck is a Helm post-renderer that lets an install or upgrade go ahead only when Helm
// renders exactly the manifests the plan showed. Helm calls it after rendering and before
// it writes anything to the cluster, so a chart that renders differently at apply (random
// values, timestamps, lookups that now find something) fails without touching the cluster.
type PlanCheck struct {
	// Planned maps the key of every object Helm is expected to render (hooks and CRDs are
	// not part of Helm's stream) to the manifest the plan showed.
	Planned map[string]string
	// Manifests turns Helm's rendered stream into manifests keyed and redacted the way the
	// plan's are.
	Manifests func(rendered string) (map[string]string, error)
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

// Run returns rendered unchanged, or a *PlanMismatchError.
func (p *PlanCheck) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	stream, err := withoutFilenames(rendered.String())
	if err != nil {
		return nil, fmt.Errorf("read the manifests Helm rendered: %w", err)
	}
	got, err := p.Manifests(stream)
	if err != nil {
		return nil, fmt.Errorf("read the manifests Helm rendered: %w", err)
	}
	if err := ComparePlanned(p.Planned, got); err != nil {
		return nil, err
	}
	return rendered, nil
}

// filenameAnnotation is the annotation Helm 4 puts on every object it hands a post-renderer,
// naming the template the object came from, and removes from what the post-renderer returns.
const filenameAnnotation = "postrenderer.helm.sh/postrender-filename"

// withoutFilenames returns Helm's post-renderer stream without Helm's filename annotation,
// and without the annotations it leaves empty: the objects as the chart rendered them.
func withoutFilenames(stream string) (string, error) {
	nodes, err := kio.ParseAll(stream)
	if err != nil {
		return "", err
	}
	for _, node := range nodes {
		if _, err := node.Pipe(kyaml.ClearAnnotation(filenameAnnotation)); err != nil {
			return "", err
		}
		if err := kyaml.ClearEmptyAnnotations(node); err != nil {
			return "", err
		}
	}
	return kio.StringAll(nodes)
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
