package decide

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/grovehq/grove/plugins/sdk/scaling"
)

func ip(n int) *int { return &n }

func fp(f float64) *float64 { return &f }

func TestCount(t *testing.T) {
	bounds := scaling.Bounds{Desired: 3, Min: 0, Max: 10}
	for _, tc := range []struct {
		name string
		req  CountRequest
		want int
		err  string
	}{
		{"another policy's decision wins over the input", CountRequest{Action: "CLUSTER_SCALE_OUT", Decided: ip(4), ScaleCount: ip(2)}, 4, ""},
		{"another policy's decision wins over a resize", CountRequest{Action: "CLUSTER_RESIZE", Decided: ip(2),
			Resize: scaling.Resize{AdjustmentType: scaling.ChangeInCapacity, Number: fp(-1), Strict: true}, Bounds: bounds, Current: 3}, 2, ""},
		{"a decision of zero creates none", CountRequest{Action: "CLUSTER_SCALE_OUT", Decided: ip(0), ScaleCount: ip(2)}, 0, ""},
		{"a negative decision is refused", CountRequest{Action: "CLUSTER_SCALE_OUT", Decided: ip(-1)}, 0, "negative"},
		{"scale-out's count input", CountRequest{Action: "CLUSTER_SCALE_OUT", ScaleCount: ip(3)}, 3, ""},
		{"scale-out without a count is one", CountRequest{Action: "CLUSTER_SCALE_OUT"}, 1, ""},
		{"a negative scale-out count is refused", CountRequest{Action: "CLUSTER_SCALE_OUT", ScaleCount: ip(-2)}, 0, "negative"},
		{"a node creation is one node", CountRequest{Action: "NODE_CREATE"}, 1, ""},
		{"a growing resize parses to the nodes it adds", CountRequest{Action: "CLUSTER_RESIZE",
			Resize: scaling.Resize{AdjustmentType: scaling.ExactCapacity, Number: fp(5), Strict: true}, Bounds: bounds, Current: 3}, 2, ""},
		{"a percentage resize", CountRequest{Action: "CLUSTER_RESIZE",
			Resize: scaling.Resize{AdjustmentType: scaling.ChangeInPercentage, Number: fp(100), Strict: true}, Bounds: bounds, Current: 3}, 3, ""},
		{"a shrinking resize creates none", CountRequest{Action: "CLUSTER_RESIZE",
			Resize: scaling.Resize{AdjustmentType: scaling.ChangeInCapacity, Number: fp(-2), Strict: true}, Bounds: bounds, Current: 3}, 0, ""},
		{"a resize of the bounds only creates none", CountRequest{Action: "CLUSTER_RESIZE",
			Resize: scaling.Resize{MaxSize: ip(8), Strict: true}, Bounds: bounds, Current: 3}, 0, ""},
		{"a resize beyond max_size is refused when strict", CountRequest{Action: "CLUSTER_RESIZE",
			Resize: scaling.Resize{AdjustmentType: scaling.ExactCapacity, Number: fp(20), Strict: true}, Bounds: bounds, Current: 3}, 0, "max"},
		{"a resize beyond max_size is truncated when not strict", CountRequest{Action: "CLUSTER_RESIZE",
			Resize: scaling.Resize{AdjustmentType: scaling.ExactCapacity, Number: fp(20)}, Bounds: bounds, Current: 3}, 7, ""},
		{"another action is refused", CountRequest{Action: "CLUSTER_SCALE_IN"}, 0, "does not handle action CLUSTER_SCALE_IN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Count(tc.req)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %d, %v; want an error containing %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestGroupMismatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		want  string
		have  []string
		match bool
	}{
		{"same policy", AntiAffinity, []string{AntiAffinity}, true},
		{"the group's first policy is compared", Affinity, []string{Affinity, AntiAffinity}, true},
		{"other policy", Affinity, []string{AntiAffinity}, false},
		{"soft is not hard", AntiAffinity, []string{SoftAntiAffinity}, false},
		{"a group with no policies", Affinity, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := GroupMismatch("web", tc.want, tc.have)
			if (got == "") != tc.match {
				t.Fatalf("GroupMismatch = %q, want match %v", got, tc.match)
			}
			if !tc.match && (!strings.Contains(got, "'web'") || !strings.Contains(got, tc.want) || !strings.HasSuffix(got, ".")) {
				t.Errorf("reason %q should name the group and the policy, as a sentence", got)
			}
		})
	}
}

func TestGroupName(t *testing.T) {
	if got := GroupName("web-group", "abc"); got != "web-group" {
		t.Errorf("spec name: %q", got)
	}
	if got := GroupName("", "abc12345"); got != "server_group_abc12345" {
		t.Errorf("generated name: %q", got)
	}
}

func TestDRSZone(t *testing.T) {
	for _, tc := range []struct {
		name string
		zone string
		hvs  []string
		want string
	}{
		{"the zone defaults to nova", "", []string{"host-a", "vsphere_drs_1"}, "nova:vsphere_drs_1"},
		{"the policy's zone", "az1", []string{"vsphere_drs_1"}, "az1:vsphere_drs_1"},
		{"the first match in Nova's order", "", []string{"host-drs-2", "host-drs-1"}, "nova:host-drs-2"},
		{"case-insensitive", "", []string{"host-a", "Cluster-DRS-East"}, "nova:Cluster-DRS-East"},
		{"no match", "", []string{"host-a", "host-dr", "host-b"}, ""},
		{"no hypervisors", "nova", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DRSZone(tc.zone, tc.hvs)
			if tc.want == "" {
				if !errors.Is(err, ErrNoDRSHost) || err.Error() != "No suitable vSphere host is available." {
					t.Fatalf("got %q, %v; want Senlin's refusal", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestPlacement(t *testing.T) {
	got := Placement(Same(2, Entry{ServerGroup: "XYZ-ABCD"}))
	want := map[string]any{"count": 2, "placements": []any{map[string]any{"servergroup": "XYZ-ABCD"}, map[string]any{"servergroup": "XYZ-ABCD"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("group only: %v", got)
	}
	got = Placement(Same(1, Entry{ServerGroup: "XYZ-ABCD", Zone: "nova:vsphere_drs_1"}))
	want = map[string]any{"count": 1, "placements": []any{map[string]any{"servergroup": "XYZ-ABCD", "zone": "nova:vsphere_drs_1"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with a zone: %v", got)
	}
	if got := Placement(nil); got["count"] != 0 || len(got["placements"].([]any)) != 0 {
		t.Errorf("none: %v", got)
	}
}

func hostsOf(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Host
		if e.Refused != "" {
			out[i] = "!"
		}
	}
	return out
}

func TestAssign(t *testing.T) {
	hosts := []string{"a", "b", "c"}
	for _, tc := range []struct {
		name    string
		policy  string
		count   int
		running map[string]int
		want    []string // "!" for a refused node
	}{
		{"affinity on an empty cluster takes the first host", Affinity, 3, nil, []string{"a", "a", "a"}},
		{"affinity follows the cluster's nodes", Affinity, 2, map[string]int{"b": 2}, []string{"b", "b"}},
		{"affinity follows where most nodes run", SoftAffinity, 2, map[string]int{"a": 1, "c": 3}, []string{"c", "c"}},
		{"anti-affinity gives each its own host", AntiAffinity, 3, nil, []string{"a", "b", "c"}},
		{"anti-affinity skips hosts the cluster runs on", AntiAffinity, 2, map[string]int{"a": 1}, []string{"b", "c"}},
		{"anti-affinity refuses the excess", AntiAffinity, 4, nil, []string{"a", "b", "c", "!"}},
		{"anti-affinity with every host taken refuses all", AntiAffinity, 2, map[string]int{"a": 1, "b": 1, "c": 1}, []string{"!", "!"}},
		{"soft anti-affinity spreads evenly", SoftAntiAffinity, 5, nil, []string{"a", "b", "c", "a", "b"}},
		{"soft anti-affinity fills the emptiest first", SoftAntiAffinity, 3, map[string]int{"a": 2, "b": 1}, []string{"c", "b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Assign(tc.policy, tc.count, hosts, tc.running)
			if h := hostsOf(got); !reflect.DeepEqual(h, tc.want) {
				t.Fatalf("hosts %v, want %v", h, tc.want)
			}
			for _, e := range got {
				if e.Refused != "" && (!strings.Contains(e.Refused, "anti-affinity") || !strings.HasSuffix(e.Refused, ".")) {
					t.Errorf("refusal %q should say why, as a sentence", e.Refused)
				}
			}
		})
	}
	for _, e := range Assign(Affinity, 2, nil, nil) {
		if e.Refused == "" || e.Host != "" {
			t.Errorf("no hosts: %+v, want a refusal", e)
		}
	}
}

func TestPolicyKinds(t *testing.T) {
	if !Together(Affinity) || !Together(SoftAffinity) || Together(AntiAffinity) || Together(SoftAntiAffinity) {
		t.Error("Together")
	}
	if !Hard(Affinity) || !Hard(AntiAffinity) || Hard(SoftAffinity) || Hard(SoftAntiAffinity) {
		t.Error("Hard")
	}
}

// TestMerge: an earlier policy's zone or region stays in each entry, the
// affinity policy's keys win, and entries past the earlier ones are kept.
func TestMerge(t *testing.T) {
	earlier := map[string]any{"count": 2, "placements": []any{map[string]any{"zone": "az1", "region_name": "r1"}, map[string]any{"zone": "az2"}}}
	ours := Placement([]Entry{{ServerGroup: "g"}, {ServerGroup: "g", Zone: "nova"}, {ServerGroup: "g"}})
	got := Merge(earlier, ours)["placements"].([]any)
	want := []any{map[string]any{"servergroup": "g", "zone": "az1", "region_name": "r1"}, map[string]any{"servergroup": "g", "zone": "nova"}, map[string]any{"servergroup": "g"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Merge = %v, want %v", got, want)
	}
	if got := Merge(nil, Placement([]Entry{{ServerGroup: "g"}})); len(got["placements"].([]any)) != 1 {
		t.Errorf("Merge with nothing earlier = %v", got)
	}
}
