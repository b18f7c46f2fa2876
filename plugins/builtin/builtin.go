// Package builtin assembles the profile and policy types that ship inside
// the grove binary. They still run out of process: the agent starts
// `grove plugin serve`, which serves them over go-plugin like any plugin.
package builtin

import (
	"os"

	"github.com/grovehq/grove/plugins/builtin/affinity"
	"github.com/grovehq/grove/plugins/builtin/batch"
	"github.com/grovehq/grove/plugins/builtin/container"
	"github.com/grovehq/grove/plugins/builtin/deletion"
	"github.com/grovehq/grove/plugins/builtin/health"
	"github.com/grovehq/grove/plugins/builtin/hostplacement"
	"github.com/grovehq/grove/plugins/builtin/noop"
	"github.com/grovehq/grove/plugins/builtin/nova"
	"github.com/grovehq/grove/plugins/builtin/placement"
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
		Profiles: []sdk.ProfileType{process.Type(), noop.Type(), container.Type(), vsphere.Type(), nova.Type()},
		Policies: []sdk.PolicyType{deletion.Type(), scalingpolicy.Type(), affinity.Type(), batch.Type(), placement.ZoneType(), placement.RegionType(), health.Type(), hostplacement.Type()},
	}
}

// Env is the environment the built-in plugin declares it needs from the
// agent's: the container driver's engine endpoints (DOCKER_HOST, or several
// in GROVE_DOCKER_HOSTS), grove.noop's pretend hosts (GROVE_NOOP_HOSTS), the vSphere driver's connection defaults
// (vsphere.EnvNames) and the Nova driver's OpenStack credentials
// (nova.Env: the OS_* variables and the clouds.yaml the agent would use).
// The plugin host passes these and nothing else of the agent's environment
// beyond its minimal set.
func Env() map[string]string {
	out := map[string]string{}
	for _, k := range append([]string{"DOCKER_HOST", "GROVE_DOCKER_HOSTS", noop.HostsEnv}, vsphere.EnvNames()...) {
		if v := os.Getenv(k); v != "" {
			out[k] = v
		}
	}
	for k, v := range nova.Env() {
		out[k] = v
	}
	return out
}

// ConfigKeys are the keys the built-in plugin reads from its config, the
// agent config's plugin "builtin" block: the container driver's
// docker_hosts and the vSphere driver's vCenter and defaults
// (vsphere.ConfigKeys).
func ConfigKeys() []string {
	return append([]string{"docker_hosts"}, vsphere.ConfigKeys()...)
}
