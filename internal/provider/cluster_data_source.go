package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ datasource.DataSourceWithConfigure = (*clusterDataSource)(nil)

// clusterDataSource tells which cluster and identity the provider uses: a quick check of a
// pipeline's credentials before anything is planned.
type clusterDataSource struct {
	data *providerData
}

type clusterModel struct {
	Host          types.String `tfsdk:"host"`
	Context       types.String `tfsdk:"context"`
	ServerVersion types.String `tfsdk:"server_version"`
	Username      types.String `tfsdk:"username"`
}

func newClusterDataSource() datasource.DataSource { return &clusterDataSource{} }

func (d *clusterDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster"
}

func (d *clusterDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Connects to the cluster and tells which API server, kubeconfig context and identity the provider uses.",
		Attributes: map[string]schema.Attribute{
			"host":           schema.StringAttribute{Computed: true, MarkdownDescription: "Address of the API server."},
			"context":        schema.StringAttribute{Computed: true, MarkdownDescription: "Kubeconfig context in use; empty with an explicit `host` or in-cluster configuration."},
			"server_version": schema.StringAttribute{Computed: true, MarkdownDescription: "The API server's version, e.g. `v1.37.2`."},
			"username":       schema.StringAttribute{Computed: true, MarkdownDescription: "The user the API server authenticates the provider as."},
		},
	}
}

func (d *clusterDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *clusterDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	c := d.data.clients(ctx, "reading the data source gitlabk8s_cluster", &resp.Diagnostics)
	if c == nil {
		return
	}
	user, err := c.WhoAmI(ctx)
	if err != nil {
		resp.Diagnostics.AddError("Unable to Read Identity", "The API server did not say who the provider is authenticated as on "+c.Source.String()+".\n\n"+err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, clusterModel{
		Host:          types.StringValue(c.Source.Host),
		Context:       types.StringValue(c.Source.Context),
		ServerVersion: types.StringValue(c.ServerVersion),
		Username:      types.StringValue(user),
	})...)
}
