// Command grove-plugin-files is an example third-party Grove plugin. One
// binary serves two components:
//
//   - the profile type example.file: each node is a file in a directory,
//     written with the node's name and index;
//   - the policy type grove.policy.quota: it refuses growing a cluster past
//     a number of nodes.
//
// Build it, put it in the agent's plugin dir, and register it with its
// SHA-256 in the agent config (see README.md).
package main

import (
	"github.com/grovehq/grove/plugins/sdk"
)

func main() {
	sdk.Main(&sdk.Plugin{
		Name:     "files",
		Version:  "0.1.0",
		Profiles: []sdk.ProfileType{fileProfile()},
		Policies: []sdk.PolicyType{quotaPolicy()},
	})
}
