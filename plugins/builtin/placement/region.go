package placement

import (
	"context"

	"github.com/grovehq/grove/plugins/builtin/placement/decide"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// RegionTypeName is Senlin's type name, so Senlin specs work unchanged.
const RegionTypeName = "senlin.policy.region_placement"

// RegionPriority is Senlin's priority of the region placement policy
// class.
const RegionPriority = 200

// RegionType returns the region placement policy's registration, for any
// profile type. Grove asks no Keystone which regions exist: the regions
// are the spec's, and a node's placement names its region for the driver
// (see docs/policies.md for which drivers follow it).
func RegionType() sdk.PolicyType {
	k := kind{
		listKey:    "regions",
		nodeKey:    "region_name",
		noneUsable: "No region is found usable.",
		pinned: func(c sdk.Cluster) bool {
			cx, _ := c.Profile.Properties["context"].(map[string]any)
			r, _ := cx["region_name"].(string)
			return r != ""
		},
		known: func(context.Context, sdk.Cluster) (func(string) bool, error) {
			return func(string) bool { return true }, nil
		},
		areaOf: decide.RegionOf,
	}
	return sdk.PolicyType{
		Type:        RegionTypeName,
		Versions:    []string{"1.0"},
		Description: "Spreads a cluster's nodes over regions by weight, with a cap per region.",
		Schema:      schema.Schema{"regions": ptr(listSchema("a region", true))},
		Targets:     targets(),
		Priority:    RegionPriority,
		Singleton:   true,
		Policy:      policy{k},
		Validate:    k.validate,
	}
}
