package helmrelease

import (
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
)

// Applied returns the documents rel applied, its manifest and hooks (test hooks included),
// from which the next rendering takes the values the chart generated. A release that was
// uninstalled applied nothing that remains.
func Applied(rel *release.Release) []chart.Document {
	if rel == nil || rel.Info == nil || rel.Info.Status == rcommon.StatusUninstalled {
		return nil
	}
	hooks := make([]chart.Document, 0, len(rel.Hooks))
	for _, h := range rel.Hooks {
		hooks = append(hooks, chart.Document{Source: h.Path, Text: h.Manifest})
	}
	return chart.ReleaseDocuments(rel.Manifest, hooks)
}
