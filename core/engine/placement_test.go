package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/plugins/builtin/noop"
)

// hostsOf is where a cluster's nodes are, by node name.
func (h *harness) hostsOf(clusterID string) map[string]string {
	out := map[string]string{}
	for _, n := range h.nodes(clusterID) {
		out[n.Name], _ = n.Data["host"].(string)
	}
	return out
}

func count(m map[string]string) map[string]int {
	out := map[string]int{}
	for _, h := range m {
		out[h]++
	}
	return out
}

// TestPlacementPolicyPlacesOnHosts: grove.policy.placement places a
// scale-out's nodes on grove.noop's hosts by constraints and a hard
// anti-affinity against another cluster, the driver records the host it
// was given, and a scale-in removes nodes from the worst-placed hosts.
func TestPlacementPolicyPlacesOnHosts(t *testing.T) {
	t.Setenv(noop.HostsEnv, "h1:zone=a h2:zone=a h3:zone=b h4:zone=a,load_avg=0.5")
	h := newHarness(t, nil)
	h.profileOf("p", noop.TypeName, map[string]any{})
	zero, timeout := 0, 60

	cache := h.create(engine.ClusterCreate{Name: "cache", Profile: "p", DesiredCapacity: &zero, Timeout: &timeout})
	h.policy("pin-cache", "grove.policy.placement", "1.0", `{"hosts": ["h2"]}`)
	h.attach(cache, "pin-cache")
	h.ok(h.act(cache, `{"scale_out": {"count": 1}}`))
	if got := count(h.hostsOf(cache.ID)); got["h2"] != 1 || len(got) != 1 {
		t.Fatalf("cache's node is on %v, want h2", got)
	}

	web := h.create(engine.ClusterCreate{Name: "web", Profile: "p", DesiredCapacity: &zero, Timeout: &timeout})
	h.policy("place-web", "grove.policy.placement", "1.0", `{"constraints": "labels.zone == \"a\"", "hard_anti_affinity": ["cache"]}`)
	h.attach(web, "place-web")
	h.ok(h.act(web, `{"scale_out": {"count": 3}}`))
	// h2 runs cache, h3 is in zone b: nodes order over h1 and h4.
	if got := count(h.hostsOf(web.ID)); got["h1"] != 2 || got["h4"] != 1 || len(got) != 2 {
		t.Fatalf("web's nodes are on %v, want two on h1 and one on h4", got)
	}

	d, err := h.eng.ClusterPlacement(h.ctx(), web)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range d.Hosts {
		rows = append(rows, fmt.Sprintf("%d %s %s %d %s", r.Rank, r.Host, r.Flags, r.Nodes, r.Reason))
	}
	want := []string{"1 h1 L 2 ", "2 h4  1 ", "0 h2 A 0 hard anti-affinity: cache runs here", "0 h3 C 0 the constraints are false on it"}
	if !slices.Equal(rows, want) || d.Leader != "h1" || !slices.Equal(d.Place, []string{"h4"}) {
		t.Errorf("placement view:\n%s\nwant\n%s\nleader %s place %v", strings.Join(rows, "\n"), strings.Join(want, "\n"), d.Leader, d.Place)
	}
	if _, err := h.eng.ClusterPlacement(h.ctx(), cache); err != nil {
		t.Errorf("cache's placement: %v", err)
	}

	h.ok(h.act(web, `{"scale_in": {"count": 2}}`))
	// The host with the most nodes gives first (h1), then the worst ranked
	// of the equals (h4).
	if got := count(h.hostsOf(web.ID)); got["h1"] != 1 || len(got) != 1 {
		t.Fatalf("after scale-in web's nodes are on %v, want one on h1", got)
	}

	bare := h.create(engine.ClusterCreate{Name: "bare", Profile: "p", DesiredCapacity: &zero, Timeout: &timeout})
	if _, err := h.eng.ClusterPlacement(h.ctx(), bare); err == nil || !strings.Contains(err.Error(), "has no grove.policy.placement policy attached") {
		t.Errorf("placement of a cluster without the policy: %v", err)
	}

	// No host left: the action is refused with each host's reason.
	h.policy("nowhere", "grove.policy.placement", "1.0", `{"constraints": "labels.zone == \"c\""}`)
	other := h.create(engine.ClusterCreate{Name: "other", Profile: "p", DesiredCapacity: &zero, Timeout: &timeout})
	h.attach(other, "nowhere")
	end := h.wait(h.act(other, `{"scale_out": {"count": 1}}`))
	if end.Status != model.ActionFailed || !strings.Contains(end.StatusReason, "no host can take a new node: h1: the constraints are false on it; h2: the constraints") {
		t.Errorf("scale-out with no host: %s %s", end.Status, end.StatusReason)
	}
}

// TestPlacementPolicyValidation: bad properties are refused naming the
// field.
func TestPlacementPolicyValidation(t *testing.T) {
	h := newHarness(t, nil)
	for props, want := range map[string]string{
		`{"placement": "random"}`:           "placement",
		`{"constraints": "labels.zone =="}`: "properties.constraints: the expression does not compile",
		`{"hosts": ["a", "a"]}`:             `properties.hosts[1]: the host "a" is listed twice`,
	} {
		spec := map[string]any{"type": "grove.policy.placement", "version": "1.0", "properties": decodeJSON(t, props)}
		_, err := h.eng.CreatePolicy(h.ctx(), caller, "bad", spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", props, err, want)
		}
	}
}
