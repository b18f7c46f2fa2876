package provider

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
)

// TestSensitiveAttributes: the attributes that may hold secrets are the
// sensitive ones, so plans and CLI output never print them: the token, a
// spec's properties (a process's or container's env is a secret) in the
// resources and the data sources, and the write-only properties_wo. The
// JSON ones keep the state type string, so states written before they
// became jsontypes.Normalized read as they are.
func TestSensitiveAttributes(t *testing.T) {
	ctx := context.Background()
	srv, err := factories["grove"]()
	if err != nil {
		t.Fatal(err)
	}
	sch, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var sensitive []string
	collect := func(prefix string, s *tfprotov6.Schema) {
		for _, a := range s.Block.Attributes {
			if a.Sensitive {
				sensitive = append(sensitive, prefix+"."+a.Name)
			}
		}
	}
	collect("provider", sch.Provider)
	for name, s := range sch.ResourceSchemas {
		collect(name, s)
	}
	for name, s := range sch.DataSourceSchemas {
		collect("data."+name, s)
	}
	sort.Strings(sensitive)
	want := []string{"data.grove_policy.properties", "data.grove_profile.properties", "grove_policy.properties", "grove_policy.properties_wo",
		"grove_profile.properties", "grove_profile.properties_wo", "provider.token"}
	if !slices.Equal(sensitive, want) {
		t.Errorf("sensitive attributes: %q, want %q", sensitive, want)
	}
	for _, name := range []string{"grove_profile", "grove_policy"} {
		for _, a := range sch.ResourceSchemas[name].Block.Attributes {
			if (a.Name == "properties" || a.Name == "properties_wo") && !a.Type.Is(tftypes.String) {
				t.Errorf("%s.%s is %s in the state, not a string: states written before would not read", name, a.Name, a.Type)
			}
		}
	}
}

// TestAPICallsLogged: with a logger in the context (Terraform's TF_LOG
// gives the provider one), configuring the provider and reading a data
// source log each request to the agent (method, path, status, duration)
// through tflog, and the token never appears in the logs.
func TestAPICallsLogged(t *testing.T) {
	var buf bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &buf)
	srv, err := factories["grove"]()
	if err != nil {
		t.Fatal(err)
	}
	sch, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	object := func(s *tfprotov6.Schema, set map[string]tftypes.Value) *tfprotov6.DynamicValue {
		typ := s.ValueType().(tftypes.Object)
		vals := map[string]tftypes.Value{}
		for name, at := range typ.AttributeTypes {
			vals[name] = tftypes.NewValue(at, nil)
		}
		for k, v := range set {
			vals[k] = v
		}
		dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, vals))
		if err != nil {
			t.Fatal(err)
		}
		return &dv
	}
	// The dev agent on loopback takes any token it is not sent; this one
	// it is sent, and it must not show in the logs whatever the answer.
	const secret = "grove_TestAPICallsLoggedNeverShowsThisToken000"
	for _, token := range []string{secret, ""} {
		set := map[string]tftypes.Value{"address": tftypes.NewValue(tftypes.String, agentURL)}
		if token != "" {
			set["token"] = tftypes.NewValue(tftypes.String, token)
		}
		if _, err := srv.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: object(sch.Provider, set)}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := srv.ReadDataSource(ctx, &tfprotov6.ReadDataSourceRequest{TypeName: "grove_profile_types",
		Config: object(sch.DataSourceSchemas["grove_profile_types"], nil)})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Fatalf("reading grove_profile_types: %s: %s", d.Summary, d.Detail)
	}
	if strings.Contains(buf.String(), secret) {
		t.Fatalf("the logs hold the token:\n%s", buf.String())
	}
	entries, err := tflogtest.MultilineJSONDecode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	answered := map[string]bool{}
	configured := false
	for _, e := range entries {
		if e["@message"] == "The Grove agent answered" {
			if _, timed := e["grove_duration_ms"]; timed {
				answered[fmt.Sprintf("%v %v %v", e["grove_method"], e["grove_path"], e["grove_status"])] = true
			}
		}
		if e["@message"] == "Configuring the Grove provider" && e["grove_address"] == agentURL && e["token_set"] == true {
			configured = true
		}
	}
	for _, want := range []string{"GET /v1/build-info 200", "GET /v1/profile-types 200"} {
		if !answered[want] {
			t.Errorf("no log entry for %s; logged answers: %v", want, answered)
		}
	}
	if !configured {
		t.Errorf("no log entry for the provider's configuration with its address and whether a token is set:\n%v", entries)
	}
}
