package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/aggregates"

	"github.com/grovehq/grove/internal/novatest"
)

// TestNovaZonePlacementPolicy runs senlin.policy.zone_placement through
// the API and the CLI on a real Nova of the test's own, whose host-b an
// aggregate puts in a second availability zone, az2: a scale-out of four
// boots two servers in each zone (each server in the zone its node's
// placement names, host-b for az2, and in the server group of the affinity
// policy bound beside it), a scale-in removes one of the zone the
// plan picks, and a zone Nova does not have is refused at attach.
func TestNovaZonePlacementPolicy(t *testing.T) {
	novatest.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	n, err := novatest.Start(ctx, t.TempDir(), novatest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	compute := n.Compute("2.56")
	agg, err := aggregates.Create(ctx, compute, aggregates.CreateOpts{Name: "second-zone", AvailabilityZone: "az2"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := aggregates.AddHost(ctx, compute, agg.ID, aggregates.AddHostOpts{Host: "host-b"}).Extract(); err != nil {
		t.Fatal(err)
	}
	a := startAgentWith(t, agentOptions{env: n.Env()}, t.TempDir())
	novaProfile(a, n, "zp-prof", nil)
	a.waitAction(a.createCluster("zp", "zp-prof", 0, nil))

	// A zone Nova lacks is refused at attach, named.
	a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": "nowhere",
		"spec": map[string]any{"type": "senlin.policy.zone_placement", "version": "1.0",
			"properties": map[string]any{"zones": []any{map[string]any{"name": "nowhere"}}}}}}, nil)
	act := a.waitFailed(a.clusterAction("zp", "policy_attach", map[string]any{"policy_id": "nowhere"}))
	if !strings.Contains(act.StatusReason, "nowhere") {
		t.Errorf("attach with a zone Nova lacks: %s", act.StatusReason)
	}

	// With the CLI, as docs/policies.md shows it.
	spec := filepath.Join(t.TempDir(), "zones.yaml")
	if err := os.WriteFile(spec, []byte("type: senlin.policy.zone_placement\nversion: 1.0\nproperties:\n  zones:\n    - name: nova\n    - name: az2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The affinity policy, at the same priority, adds its server group to
	// each node's placement, which keeps its zone.
	affinityPolicy(a, "zp-group", map[string]any{"servergroup": map[string]any{"policies": "soft-anti-affinity"}})
	a.waitAction(a.clusterAction("zp", "policy_attach", map[string]any{"policy_id": "zp-group"}))
	for _, args := range [][]string{{"policy", "create", "-spec-file", spec, "zones"}, {"cluster", "policy-attach", "-wait", "zp", "zones"},
		{"cluster", "scale-out", "-wait", "-count", "4", "zp"}} {
		if out, errOut, code := a.grove(args...); code != 0 {
			t.Fatalf("grove %v: %d\n%s\n%s", args, code, out, errOut)
		}
	}
	if b := a.binding("zp", "zones"); b.Priority != 300 {
		t.Errorf("binding priority %d, want Senlin's 300", b.Priority)
	}
	zoneOf := map[string]string{}
	count := map[string]int{}
	for _, nd := range a.nodes(a.cluster("zp").ID) {
		pl, _ := nd.Data["placement"].(map[string]any)
		zone, _ := nd.Data["zone"].(string)
		if nd.Status != "ACTIVE" || pl["zone"] != zone || pl["servergroup"] == nil {
			t.Errorf("node %s: %s, placed in %v (group %v), server in zone %q", nd.Name, nd.Status, pl["zone"], pl["servergroup"], zone)
		}
		if host, _ := nd.Data["host"].(string); (zone == "az2") != (host == "host-b") {
			t.Errorf("node %s: server in zone %s on host %s", nd.Name, zone, host)
		}
		zoneOf[nd.ID] = zone
		count[zone]++
	}
	if !reflect.DeepEqual(count, map[string]int{"nova": 2, "az2": 2}) {
		t.Fatalf("servers per zone %v, want two in nova and two in az2", count)
	}

	act = a.waitAction(a.clusterAction("zp", "scale_in", map[string]any{"count": 1}))
	if del, _ := act.Data["deletion"].(map[string]any); !reflect.DeepEqual(del["zones"], map[string]any{"nova": float64(1)}) {
		t.Errorf("the scale-in's data.deletion %v, want one from nova", act.Data["deletion"])
	}
	count = map[string]int{}
	for _, nd := range a.nodes(a.cluster("zp").ID) {
		count[zoneOf[nd.ID]]++
	}
	if !reflect.DeepEqual(count, map[string]int{"nova": 1, "az2": 2}) {
		t.Errorf("servers per zone after the scale-in %v, want one in nova and two in az2", count)
	}
}

// TestRegionPlacementPolicy runs senlin.policy.region_placement through
// the API on grove.noop nodes (any profile type takes it): with r1 capped
// at one node and twice as heavy as r2 and r3, a scale-out of three puts
// one node in each region, each node keeping its region in its
// data.placement; more nodes find no feasible plan (r1's share is over
// its cap, Senlin's plan gives it to no other region), and a scale-in
// takes from the lightest region first (r2, in the spec's order).
func TestRegionPlacementPolicy(t *testing.T) {
	a := startAgent(t, t.TempDir())
	noopProfileWith(a, "rp-prof", map[string]any{})
	a.waitAction(a.createCluster("rp", "rp-prof", 0, nil))
	a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": "regions",
		"spec": map[string]any{"type": "senlin.policy.region_placement", "version": "1.0", "properties": map[string]any{"regions": []any{
			map[string]any{"name": "r1", "weight": 200, "cap": 1}, map[string]any{"name": "r2"}, map[string]any{"name": "r3"}}}}}}, nil)
	a.waitAction(a.clusterAction("rp", "policy_attach", map[string]any{"policy_id": "regions"}))
	if b := a.binding("rp", "regions"); b.Priority != 200 {
		t.Errorf("binding priority %d, want Senlin's 200", b.Priority)
	}
	act := a.waitAction(a.clusterAction("rp", "scale_out", map[string]any{"count": 3}))
	if c, _ := act.Data["creation"].(map[string]any); !reflect.DeepEqual(c["regions"], map[string]any{"r1": float64(1), "r2": float64(1), "r3": float64(1)}) {
		t.Errorf("the scale-out's data.creation %v", act.Data["creation"])
	}
	regions := func() map[string]int {
		out := map[string]int{}
		for _, nd := range a.nodes(a.cluster("rp").ID) {
			pl, _ := nd.Data["placement"].(map[string]any)
			r, _ := pl["region_name"].(string)
			out[r]++
		}
		return out
	}
	if got := regions(); !reflect.DeepEqual(got, map[string]int{"r1": 1, "r2": 1, "r3": 1}) {
		t.Fatalf("nodes per region %v, want one each (r1 capped at one)", got)
	}
	act = a.waitFailed(a.clusterAction("rp", "scale_out", map[string]any{"count": 3}))
	if !strings.Contains(act.StatusReason, "There is no feasible plan to handle all nodes.") {
		t.Errorf("a growth past r1's cap: %s", act.StatusReason)
	}
	a.waitAction(a.clusterAction("rp", "scale_in", map[string]any{"count": 1}))
	if got := regions(); !reflect.DeepEqual(got, map[string]int{"r1": 1, "r3": 1}) {
		t.Errorf("nodes per region after the scale-in %v, want r2's node gone", got)
	}
}
