package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

func urlsAttribute() schema.ListAttribute {
	return schema.ListAttribute{
		Computed:    true,
		ElementType: types.StringType,
		MarkdownDescription: "The URLs the release's Ingress and Gateway API HTTPRoute objects serve, `<scheme>://<host><path>`, " +
			"known at plan time with `manifests`: in the order of their keys, then of their rules and paths. An Ingress host listed " +
			"in its `tls` is `https`, any other `http`; an HTTPRoute is `https` unless its parent is a Gateway of the release " +
			"whose listener speaks HTTP, or its parentRef names port 80. Rules without a host, wildcard hosts and hosts " +
			"hidden as sensitive values have no URL. Empty when the release serves none. " +
			"A review app's pipeline can pass the first one to GitLab as the environment's URL (`environment:url`).",
	}
}

// urlsOf is the urls attribute of a release with these manifests: unknown
// while an object that may serve a URL is unknown.
func urlsOf(manifests types.Map) types.List {
	if manifests.IsUnknown() {
		return types.ListUnknown(types.StringType)
	}
	known, unknown := plannedManifests(manifests)
	for _, key := range unknown {
		if manifest.ServesURLs(key) {
			return types.ListUnknown(types.StringType)
		}
	}
	urls := manifest.URLs(known)
	values := make([]attr.Value, len(urls))
	for i, u := range urls {
		values[i] = types.StringValue(u)
	}
	return types.ListValueMust(types.StringType, values)
}
