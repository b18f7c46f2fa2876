// Package provider is Grove's Terraform provider, built with
// terraform-plugin-framework (protocol 6) at registry.terraform.io/grovehq/grove.
// It talks to an agent through the api package, as the CLI does.
package provider

import (
	"context"
	"net/http"
	"os"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/grovehq/grove/api"
)

// Address is the provider's registry address.
const Address = "registry.terraform.io/grovehq/grove"

// New returns the provider factory.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &groveProvider{version: version} }
}

type groveProvider struct{ version string }

type providerModel struct {
	Address types.String `tfsdk:"address"`
	Token   types.String `tfsdk:"token"`
}

func (p *groveProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "grove"
	resp.Version = p.version
}

func (p *groveProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Manages Grove clusters, profiles, policies, bindings and nodes through a Grove agent's API.",
		Attributes: map[string]schema.Attribute{
			"address": schema.StringAttribute{Optional: true, Description: "The agent's address, such as http://127.0.0.1:7470. Defaults to GROVE_ADDR, then http://127.0.0.1:7470."},
			"token":   schema.StringAttribute{Optional: true, Sensitive: true, Description: "Token sent as X-Auth-Token. Defaults to GROVE_TOKEN."},
		},
	}
}

func (p *groveProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	addr := cfg.Address.ValueString()
	c := api.NewClient(addr)
	if tok := cfg.Token.ValueString(); tok != "" {
		c.Token = tok
	} else {
		c.Token = os.Getenv("GROVE_TOKEN")
	}
	probe, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.Do(probe, http.MethodGet, "/v1/build-info", nil, nil, nil); err != nil {
		resp.Diagnostics.AddError("Cannot reach the Grove agent",
			"The provider could not reach the agent at "+c.Address+": "+err.Error()+"\n\nStart one with `grove agent -dev`, or set the provider's address (or GROVE_ADDR).")
		return
	}
	resp.ResourceData = c
	resp.DataSourceData = c
}

func (p *groveProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		func() resource.Resource { return &specResource{kind: "profile"} },
		func() resource.Resource { return &specResource{kind: "policy"} },
		func() resource.Resource { return &clusterResource{} },
		func() resource.Resource { return &attachmentResource{} },
		func() resource.Resource { return &nodeResource{} },
	}
}

func (p *groveProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		func() datasource.DataSource { return &clusterDataSource{} },
		func() datasource.DataSource { return &specDataSource{kind: "profile"} },
		func() datasource.DataSource { return &specDataSource{kind: "policy"} },
		func() datasource.DataSource { return &nodesDataSource{} },
		func() datasource.DataSource { return &typesDataSource{kind: "profile"} },
		func() datasource.DataSource { return &typesDataSource{kind: "policy"} },
	}
}
