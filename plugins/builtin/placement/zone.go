package placement

import (
	"context"
	"fmt"
	"slices"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/availabilityzones"

	"github.com/grovehq/grove/plugins/builtin/nova"
	"github.com/grovehq/grove/plugins/builtin/placement/decide"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// ZoneTypeName is Senlin's type name, so Senlin specs work unchanged.
const ZoneTypeName = "senlin.policy.zone_placement"

// ZonePriority is Senlin's priority of the zone placement policy class.
const ZonePriority = 300

// ZoneType returns the zone placement policy's registration: Senlin's,
// for os.nova.server clusters, whose availability zones Nova lists with
// the profile's credentials.
func ZoneType() sdk.PolicyType {
	d := nova.New()
	return zoneType(func(ctx context.Context, c sdk.Cluster) ([]string, error) { return novaZones(ctx, d, c) })
}

// zoneType is ZoneType with the zones listed by list.
func zoneType(list func(ctx context.Context, c sdk.Cluster) ([]string, error)) sdk.PolicyType {
	k := kind{
		listKey:    "zones",
		nodeKey:    "zone",
		noneUsable: "No availability zone found available.",
		check: func(c sdk.Cluster) error {
			if t := profileType(c); t != nova.TypeName {
				return fmt.Errorf("The zone placement policy handles clusters of profile type %s; cluster '%s' has %s.", nova.TypeName, c.Name, t)
			}
			return nil
		},
		pinned: func(c sdk.Cluster) bool {
			az, _ := c.Profile.Properties["availability_zone"].(string)
			return az != ""
		},
		known: func(ctx context.Context, c sdk.Cluster) (func(string) bool, error) {
			zones, err := list(ctx, c)
			if err != nil {
				return nil, err
			}
			return func(name string) bool { return slices.Contains(zones, name) }, nil
		},
		areaOf: decide.ZoneOf,
	}
	return sdk.PolicyType{
		Type:        ZoneTypeName,
		Versions:    []string{"1.0"},
		Description: "Spreads a cluster's Nova servers over availability zones by weight.",
		Schema:      schema.Schema{"zones": ptr(listSchema("an availability zone", false))},
		Targets:     targets(),
		Priority:    ZonePriority,
		Singleton:   true,
		Policy:      policy{k},
		Validate:    k.validate,
	}
}

// novaZones lists the availability zones Nova says are available, with
// the cluster profile's credentials (Senlin's validate_azs).
func novaZones(ctx context.Context, d *nova.Driver, c sdk.Cluster) ([]string, error) {
	cc, err := d.Compute(ctx, c.Profile)
	if err != nil {
		return nil, err
	}
	pages, err := availabilityzones.List(cc).AllPages(ctx)
	if err != nil {
		return nil, nova.APIError(ctx, "list the availability zones", err)
	}
	all, err := availabilityzones.ExtractAvailabilityZones(pages)
	if err != nil {
		return nil, nova.APIError(ctx, "read the availability zones", err)
	}
	var out []string
	for _, z := range all {
		if z.ZoneState.Available {
			out = append(out, z.ZoneName)
		}
	}
	return out, nil
}

func ptr(p schema.Property) *schema.Property { return &p }
