// Command testplugin misbehaves on purpose, as its GROVE_PLUGIN_CONFIG asks:
// it crashes soon after starting, speaks a foreign API version, prints to
// stdout before the handshake, speaks another handshake version, logs a
// line, or panics in grove.noop's create and validation ("panic_in":
// "create", "validate"). The host's and the API's tests use it. It serves grove.noop, the
// deletion policy, so an older policy API can be tried against the host, and
// test.secret, whose properties are sensitive.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/grovehq/grove/plugins/builtin/deletion"
	"github.com/grovehq/grove/plugins/builtin/noop"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

func main() {
	var cfg map[string]string
	_ = json.Unmarshal([]byte(os.Getenv("GROVE_PLUGIN_CONFIG")), &cfg)
	// test.secret is grove.noop with its label marked sensitive: a node's
	// data shows the label the plugin was given, in clear.
	secret := noop.Type()
	secret.Type = "test.secret"
	secret.Schema = schema.Schema{
		"label":        {Type: schema.String, Sensitive: true, Default: ""},
		"env":          {Type: schema.Map, Sensitive: true, Elem: &schema.Property{Type: schema.String}},
		"public":       {Type: schema.String},
		"create_delay": {Type: schema.Integer, Default: int64(0)},
	}
	plain := noop.Type()
	switch cfg["panic_in"] {
	case "create":
		plain.Driver = panicky{plain.Driver}
	case "validate":
		plain.Validate = func(context.Context, sdk.Spec) sdk.Diagnostics { panic("validate went wrong") }
	}
	p := &sdk.Plugin{Name: "testplugin", Version: "0.0.1", Profiles: []sdk.ProfileType{plain, secret}, Policies: []sdk.PolicyType{deletion.Type()}}
	if v := cfg["profile_api"]; v != "" {
		p.ProfileAPIVersions = []string{v}
	}
	if v := cfg["policy_api"]; v != "" {
		p.PolicyAPIVersions = []string{v}
	}
	if msg := cfg["log"]; msg != "" {
		// As a plugin logs through hclog: JSON on stderr.
		hclog.New(&hclog.LoggerOptions{Name: "testplugin", JSONFormat: true, Output: os.Stderr}).Info(msg)
	}
	if cfg["print_stdout"] == "true" {
		fmt.Println("hello from a chatty init")
	}
	if ms := cfg["crash_after_ms"]; ms != "" {
		var d int
		fmt.Sscan(ms, &d)
		go func() {
			time.Sleep(time.Duration(d) * time.Millisecond)
			os.Exit(3)
		}()
	}
	if v := cfg["handshake"]; v != "" {
		// A plugin built for another version of Grove's handshake.
		hs := sdk.Handshake()
		fmt.Sscan(v, &hs.ProtocolVersion)
		goplugin.Serve(&goplugin.ServeConfig{HandshakeConfig: hs, Plugins: goplugin.PluginSet{sdk.PluginName: &sdk.GRPCPlugin{Impl: p}},
			GRPCServer: goplugin.DefaultGRPCServer})
		return
	}
	sdk.Main(p)
}

// panicky is a driver that panics in Create, as a plugin with a bug does.
type panicky struct{ sdk.Profile }

func (panicky) Create(context.Context, sdk.Spec, []sdk.Node) []sdk.Result {
	var nodes []sdk.Node
	_ = nodes[3]
	return nil
}
