// Package provider is Grove's Terraform provider, built with
// terraform-plugin-framework (protocol 6) at registry.terraform.io/grovehq/grove.
// It talks to an agent through the api package, as the CLI does.
package provider

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

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
	Address       types.String `tfsdk:"address"`
	Token         types.String `tfsdk:"token"`
	CACert        types.String `tfsdk:"ca_cert"`
	ClientCert    types.String `tfsdk:"client_cert"`
	ClientKey     types.String `tfsdk:"client_key"`
	TLSSkipVerify types.Bool   `tfsdk:"tls_skip_verify"`
}

func (p *groveProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "grove"
	resp.Version = p.version
}

func (p *groveProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Manages Grove clusters, profiles, policies, bindings and nodes through a Grove agent's API.",
		Attributes: map[string]schema.Attribute{
			"address": schema.StringAttribute{Optional: true, Description: "The agent's address, such as http://127.0.0.1:7470 or https://grove.example.com:7470. Defaults to GROVE_ADDR, then http://127.0.0.1:7470."},
			"token":   schema.StringAttribute{Optional: true, Sensitive: true, Description: "Token sent as X-Auth-Token. Defaults to GROVE_TOKEN."},
			"ca_cert": schema.StringAttribute{Optional: true, Description: "PEM file of the CA that signed the agent's certificate, trusted instead of the system's CAs for an https:// address. Defaults to GROVE_CACERT."},
			"client_cert": schema.StringAttribute{Optional: true,
				Description: "PEM file of a client certificate, for an agent whose tls block sets client_ca_file. Defaults to GROVE_CLIENT_CERT."},
			"client_key": schema.StringAttribute{Optional: true, Description: "PEM file of client_cert's private key. Defaults to GROVE_CLIENT_KEY."},
			"tls_skip_verify": schema.BoolAttribute{Optional: true,
				Description: "Accept any certificate from the agent. For development only: anyone between Terraform and the agent can then read the token and change what is sent."},
		},
	}
}

func (p *groveProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// Empty values take their defaults from the environment in api.New.
	c := api.New(api.Options{Address: cfg.Address.ValueString(), Token: cfg.Token.ValueString(), TLS: api.TLSOptions{
		CACert: cfg.CACert.ValueString(), ClientCert: cfg.ClientCert.ValueString(), ClientKey: cfg.ClientKey.ValueString(),
		SkipVerify: cfg.TLSSkipVerify.ValueBool()}})
	c.HTTP.Transport = loggedTransport{next: c.HTTP.Transport}
	ctx = tflog.SetField(ctx, "grove_address", c.Address)
	tflog.Info(ctx, "Configuring the Grove provider", map[string]any{"token_set": c.Token != "", "ca_cert": cfg.CACert.ValueString() != "",
		"client_cert": cfg.ClientCert.ValueString() != "", "tls_skip_verify": cfg.TLSSkipVerify.ValueBool()})
	if err := c.Err(); err != nil {
		resp.Diagnostics.AddError("Invalid TLS settings", "The provider's ca_cert, client_cert or client_key could not be loaded: "+err.Error())
		return
	}
	probe, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.Do(probe, http.MethodGet, "/v1/build-info", nil, nil, nil); err != nil {
		// An agent that answered was reached: saying otherwise, and
		// suggesting another agent, would send the user the wrong way.
		var ae *api.Error
		if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
			resp.Diagnostics.AddAttributeError(path.Root("token"), "Invalid token",
				"The agent at "+c.Address+" refused the provider's token: "+ae.Message+"\n\nSet the provider's token (or GROVE_TOKEN) to a secret from `grove token create`; "+
					"an agent started without -dev writes its first admin token to <data_dir>/bootstrap-token.")
			return
		}
		if errors.As(err, &ae) {
			resp.Diagnostics.AddError("The Grove agent refused the provider", "The agent at "+c.Address+" answered: "+err.Error())
			return
		}
		resp.Diagnostics.AddError("Cannot reach the Grove agent",
			"The provider could not reach the agent at "+c.Address+": "+err.Error()+"\n\nStart one with `grove agent -dev`, or set the provider's address (or GROVE_ADDR).")
		return
	}
	tflog.Debug(ctx, "The Grove agent answered the provider's probe")
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
