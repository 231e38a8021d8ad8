// Command minimal is the smallest terraform-plugin-framework provider worth measuring: one
// resource, `minimal_object`, kept in Terraform's state only, with no network and no
// dependencies beyond the framework. scripts/bench.sh plans it next to gitlabk8s to show what
// any provider costs Terraform to start and call, whatever it does.
package main

import (
	"context"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Address is where scripts/bench.sh installs this provider in its filesystem mirror.
const Address = "registry.terraform.io/gitlabk8s-bench/minimal"

func main() {
	if err := providerserver.Serve(context.Background(), func() provider.Provider { return minimalProvider{} },
		providerserver.ServeOpts{Address: Address}); err != nil {
		log.Fatal(err.Error())
	}
}

type minimalProvider struct{}

func (minimalProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "minimal"
}

func (minimalProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}

func (minimalProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (minimalProvider) DataSources(context.Context) []func() datasource.DataSource {
	return nil
}

func (minimalProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return objectResource{} }}
}

type objectResource struct{}

type objectModel struct {
	Name  types.String `tfsdk:"name"`
	Value types.String `tfsdk:"value"`
}

func (objectResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_object"
}

func (objectResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{Attributes: map[string]schema.Attribute{
		"name":  schema.StringAttribute{Required: true},
		"value": schema.StringAttribute{Optional: true},
	}}
}

func (objectResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m objectModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (objectResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

func (objectResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m objectModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (objectResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}
