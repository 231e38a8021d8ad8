// Package provider implements the gitlabk8s Terraform provider on terraform-plugin-framework.
// It is the only package that imports the framework and creates diagnostics; the logic it calls
// lives in packages without either.
package provider

import (
	"context"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
)

// RegistryAddress is where the provider is published.
const RegistryAddress = "registry.terraform.io/gitlabk8s/gitlabk8s"

// TypeName prefixes every resource and data source.
const TypeName = "gitlabk8s"

var _ provider.Provider = (*gitlabk8sProvider)(nil)

type gitlabk8sProvider struct {
	version string
	// getenv reads the environment; tests replace it.
	getenv func(string) string
}

// New returns a constructor of the provider, as providerserver.Serve expects.
func New(version string) func() provider.Provider {
	// Helm's lines without a release would reach the log unredacted; its actions log to each
	// release's log instead (helmrelease.Options.Log).
	helmrelease.DiscardDefaultLogs()
	return func() provider.Provider {
		return &gitlabk8sProvider{version: version, getenv: os.Getenv}
	}
}

// NewServer returns a constructor of the provider's protocol 6 server, one server per call: the
// engine (internal/enginehost) serves each front's connection one.
func NewServer(version string) func() tfprotov6.ProviderServer {
	return func() tfprotov6.ProviderServer { return providerserver.NewProtocol6(New(version)())() }
}

func (p *gitlabk8sProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = TypeName
	resp.Version = p.version
}

func (p *gitlabk8sProvider) Resources(_ context.Context) []func() resource.Resource {
	return resourceConstructors
}

func (p *gitlabk8sProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		newClusterDataSource,
		newNamespacesDataSource,
	}
}

// resourceConstructors lists every resource; each resource file registers itself here.
var resourceConstructors []func() resource.Resource

func registerResource(f func() resource.Resource) bool {
	resourceConstructors = append(resourceConstructors, f)
	return true
}
