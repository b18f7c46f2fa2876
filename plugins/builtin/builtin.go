// Package builtin assembles the profile and policy types that ship inside
// the grove binary. They still run out of process: the agent starts
// `grove plugin serve`, which serves them over go-plugin like any plugin.
package builtin

import (
	"github.com/grovehq/grove/plugins/builtin/container"
	"github.com/grovehq/grove/plugins/builtin/deletion"
	"github.com/grovehq/grove/plugins/builtin/noop"
	"github.com/grovehq/grove/plugins/builtin/process"
	"github.com/grovehq/grove/plugins/builtin/scalingpolicy"
	"github.com/grovehq/grove/plugins/builtin/vsphere"
	"github.com/grovehq/grove/plugins/sdk"
)

// Name is the built-in plugin's name in logs and `grove plugin list`.
const Name = "builtin"

// Plugin returns the built-in plugin with the given version string.
func Plugin(version string) *sdk.Plugin {
	return &sdk.Plugin{
		Name:     Name,
		Version:  version,
		Profiles: []sdk.ProfileType{process.Type(), noop.Type(), container.Type(), vsphere.Type()},
		Policies: []sdk.PolicyType{deletion.Type(), scalingpolicy.Type()},
	}
}
