package chart

import "helm.sh/helm/v4/pkg/chart/common"

// Capabilities returns the .Capabilities that Render uses for o. An install or upgrade
// hands them to Helm, so the apply renders with exactly the capabilities the plan used.
func Capabilities(o RenderOptions) (*common.Capabilities, error) {
	return capabilities(o)
}
