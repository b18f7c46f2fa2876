// Package decide holds the affinity policy's decisions as pure functions of
// what the policy read: how many nodes an action creates, whether an
// existing server group fits the policy, which vSphere DRS hypervisor a
// cluster goes to, the placement data of the nodes to create, and which of
// a driver's hosts each new node goes to. The policy
// (plugins/builtin/affinity) does the I/O around them.
package decide

import (
	"errors"
	"fmt"
	"strings"

	"github.com/grovehq/grove/plugins/sdk/scaling"
)

// The server group policies of Nova, the values of servergroup.policies.
const (
	Affinity         = "affinity"
	SoftAffinity     = "soft-affinity"
	AntiAffinity     = "anti-affinity"
	SoftAntiAffinity = "soft-anti-affinity"
)

// Policies are the accepted values of servergroup.policies, the default
// first.
var Policies = []string{AntiAffinity, Affinity, SoftAffinity, SoftAntiAffinity}

// Together says whether a policy keeps nodes on one host.
func Together(policy string) bool { return policy == Affinity || policy == SoftAffinity }

// Hard says whether a policy must hold (a refusal when it cannot) rather
// than be followed as far as it can.
func Hard(policy string) bool { return policy == Affinity || policy == AntiAffinity }

// MaxNodes bounds a resize parsed inside the policy; the engine has
// enforced its own limit before the check runs.
const MaxNodes = 1 << 30

// CountRequest is what the count of nodes an action creates is decided
// from.
type CountRequest struct {
	// Action is CLUSTER_SCALE_OUT, CLUSTER_RESIZE or NODE_CREATE.
	Action string
	// Decided is data.creation.count, the count a policy checked earlier
	// (the scaling policy) decided; nil when none did.
	Decided *int
	// ScaleCount is a scale-out's count input, nil when not given.
	ScaleCount *int
	// Resize is a resize's request; Bounds and Current what it applies to.
	Resize  scaling.Resize
	Bounds  scaling.Bounds
	Current int
}

// Count is the number of nodes the action creates, as Senlin's affinity
// policy counts them: what another policy decided, else the action's count
// input (one when absent), else what a resize parses to; a node creation
// is one node. Zero means the action creates none (a resize that shrinks
// or keeps the size), which the policy lets pass untouched.
func Count(r CountRequest) (int, error) {
	if r.Decided != nil {
		if *r.Decided < 0 {
			return 0, fmt.Errorf("The creation count %d decided by an earlier policy is negative.", *r.Decided)
		}
		return *r.Decided, nil
	}
	switch r.Action {
	case "NODE_CREATE":
		return 1, nil
	case "CLUSTER_SCALE_OUT":
		if r.ScaleCount == nil {
			return 1, nil
		}
		if *r.ScaleCount < 0 {
			return 0, fmt.Errorf("The count %d of the scale-out is negative.", *r.ScaleCount)
		}
		return *r.ScaleCount, nil
	case "CLUSTER_RESIZE":
		res, err := scaling.ParseResize(r.Bounds, r.Current, r.Resize, MaxNodes)
		if err != nil {
			return 0, err
		}
		return res.Create, nil
	}
	return 0, fmt.Errorf("The affinity policy does not handle action %s.", r.Action)
}

// GroupMismatch is the reason an existing server group does not fit the
// policy: its Nova policies do not start with the one the policy asks for
// (Senlin compares the group's first policy). Empty when it fits.
func GroupMismatch(group, want string, have []string) string {
	if len(have) > 0 && have[0] == want {
		return ""
	}
	return fmt.Sprintf("The server group '%s' of the profile's scheduler_hints has policies %s, which do not match the policy's servergroup.policies (%s).",
		group, list(have), want)
}

func list(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// GroupName is the name of the server group the policy creates: the one the
// spec gives, else Senlin's "server_group_" with a random suffix.
func GroupName(specName, random string) string {
	if specName != "" {
		return specName
	}
	return "server_group_" + random
}

// DefaultZone is the availability zone of a DRS placement when the policy
// names none.
const DefaultZone = "nova"

// ErrNoDRSHost is the refusal of a DRS placement with no hypervisor to go
// to, Senlin's words.
var ErrNoDRSHost = errors.New("No suitable vSphere host is available.")

// DRSZone is the zone string a DRS placement sends to Nova,
// "<zone>:<hypervisor>": the first hypervisor (in the order Nova lists
// them) whose name contains "drs" in any case, in the policy's zone or
// "nova".
func DRSZone(zone string, hypervisors []string) (string, error) {
	if zone == "" {
		zone = DefaultZone
	}
	for _, h := range hypervisors {
		if strings.Contains(strings.ToLower(h), "drs") {
			return zone + ":" + h, nil
		}
	}
	return "", ErrNoDRSHost
}

// Entry is one node's placement, what the driver creating it reads from
// the node's data.placement.
type Entry struct {
	ServerGroup string `json:"servergroup,omitempty"`
	Zone        string `json:"zone,omitempty"`
	// Host is the driver host the node goes to, for drivers that place
	// nodes on hosts they report (container engines, ESXi hosts).
	Host string `json:"host,omitempty"`
	// Refused says why the node cannot be placed (hard anti-affinity with
	// no host left); the driver fails the node with it.
	Refused string `json:"refused,omitempty"`
	// DRSRule asks the vSphere driver to put the node's VM in the
	// cluster's DRS rule (vsphere.RuleJoin).
	DRSRule map[string]any `json:"drs_rule,omitempty"`
}

// Map is the entry as the action's data carries it.
func (e Entry) Map() map[string]any {
	m := map[string]any{}
	if e.ServerGroup != "" {
		m["servergroup"] = e.ServerGroup
	}
	if e.Zone != "" {
		m["zone"] = e.Zone
	}
	if e.Host != "" {
		m["host"] = e.Host
	}
	if e.Refused != "" {
		m["refused"] = e.Refused
	}
	if e.DRSRule != nil {
		m["drs_rule"] = e.DRSRule
	}
	return m
}

// Placement is data.placement: count entries, one per node to create.
func Placement(entries []Entry) map[string]any {
	ps := make([]any, len(entries))
	for i, e := range entries {
		ps[i] = e.Map()
	}
	return map[string]any{"count": len(entries), "placements": ps}
}

// Merge keeps what a policy checked earlier put in data.placement's
// entries (a zone or region placement policy's zone or region_name) under
// the entries of placement, which win where both set a key. Entries past
// the earlier ones are placement's as they are.
func Merge(earlier any, placement map[string]any) map[string]any {
	had, _ := earlier.(map[string]any)
	old, _ := had["placements"].([]any)
	ours, _ := placement["placements"].([]any)
	for i, e := range ours {
		m, ok := e.(map[string]any)
		if !ok || i >= len(old) {
			continue
		}
		prev, _ := old[i].(map[string]any)
		merged := make(map[string]any, len(prev)+len(m))
		for k, v := range prev {
			merged[k] = v
		}
		for k, v := range m {
			merged[k] = v
		}
		ours[i] = merged
	}
	return placement
}

// Same is count copies of one entry: a server group's placement, where
// Nova's scheduler does the rest.
func Same(count int, e Entry) []Entry {
	out := make([]Entry, count)
	for i := range out {
		out[i] = e
	}
	return out
}

// Assign picks a host for each of count new nodes among hosts (in the
// driver's order), given how many of the cluster's nodes each host already
// runs:
//   - affinity and soft-affinity: all on the host most of the cluster's
//     nodes run on (the first host when none run yet);
//   - anti-affinity: each on a host no node of the cluster runs on, and a
//     node with no such host left is refused with the reason;
//   - soft-anti-affinity: each on the host with the fewest of the cluster's
//     nodes so far, so they spread as evenly as the hosts allow.
//
// No hosts refuses every node.
func Assign(policy string, count int, hosts []string, running map[string]int) []Entry {
	out := make([]Entry, count)
	if len(hosts) == 0 {
		for i := range out {
			out[i].Refused = "The driver reports no host to place the node on."
		}
		return out
	}
	load := make([]int, len(hosts))
	for i, h := range hosts {
		load[i] = running[h]
	}
	switch policy {
	case Affinity, SoftAffinity:
		best := 0
		for i := range hosts {
			if load[i] > load[best] {
				best = i
			}
		}
		for i := range out {
			out[i].Host = hosts[best]
		}
	case AntiAffinity:
		var free []string
		for i, h := range hosts {
			if load[i] == 0 {
				free = append(free, h)
			}
		}
		for i := range out {
			if i < len(free) {
				out[i].Host = free[i]
				continue
			}
			out[i].Refused = fmt.Sprintf("Hard anti-affinity: every one of the %d hosts already runs a node of the cluster, so node %d of the %d to create has no host of its own.",
				len(hosts), i+1, count)
		}
	default: // soft-anti-affinity
		for i := range out {
			best := 0
			for j := range hosts {
				if load[j] < load[best] {
					best = j
				}
			}
			out[i].Host = hosts[best]
			load[best]++
		}
	}
	return out
}
