package decide

import (
	"reflect"
	"slices"
	"testing"

	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/scaling"
)

func node(id, addr string) Node {
	return Node{ID: id, Status: Active, Address: addr, CreatedAt: 1}
}

func ptr[T any](v T) *T { return &v }

// TestDecideEveryTarget covers every target of senlin.policy.loadbalance
// (§c.3), plus attach and detach: which nodes leave, join, are readdressed
// and set ready.
func TestDecideEveryTarget(t *testing.T) {
	a, b, c := node("a", "127.0.0.1:1"), node("b", "127.0.0.1:2"), node("c", "127.0.0.1:3")
	d, e := node("d", "127.0.0.1:4"), node("e", "127.0.0.1:5")
	members := []Member{{"a", "127.0.0.1:1", true}, {"b", "127.0.0.1:2", true}, {"c", "127.0.0.1:3", true}}
	reverse := func(ids []string) []string { s := slices.Clone(ids); slices.Reverse(s); return s }
	building := Node{ID: "f", Status: "CREATING", Address: "127.0.0.1:6", CreatedAt: 1}
	cases := []struct {
		name string
		req  Request
		want Plan
	}{
		{"attach joins every node", Request{Phase: After, Action: Attach, Nodes: []Node{a, b, c}},
			Plan{Join: []Node{a, b, c}, Ready: []string{"a", "b", "c"}}},
		{"attach keeps a node without address out", Request{Phase: After, Action: Attach, Nodes: []Node{a, {ID: "x", Status: Active}}},
			Plan{Join: []Node{a}, Ready: []string{"a"}, Skipped: []string{"x"}}},
		{"node create joins the node", Request{Phase: After, Action: NodeCreate, Target: d.ID, Nodes: []Node{a, b, c, d}, Members: members},
			Plan{Join: []Node{d}, Ready: []string{"d"}}},
		{"a node not yet healthy joins but is not set ready", Request{Phase: After, Action: NodeCreate, Target: "f", Nodes: []Node{a, building}, Members: members[:1]},
			Plan{Join: []Node{building}}},
		{"a member waiting for health is set ready once active", Request{Phase: After, Action: ClusterScaleOut, Nodes: []Node{a, {ID: "f", Status: Active, Address: "127.0.0.1:6"}}, Members: []Member{members[0], {"f", "127.0.0.1:6", false}}},
			Plan{Ready: []string{"f"}}},
		{"node recover of a recreated node readdresses its member", Request{Phase: After, Action: NodeRecover, Target: "a", Nodes: []Node{{ID: "a", Status: Active, Address: "127.0.0.1:9"}, b, c}, Members: members},
			Plan{Readdress: []Node{{ID: "a", Status: Active, Address: "127.0.0.1:9"}}}},
		{"node recover in place (a reboot) changes nothing", Request{Phase: After, Action: NodeRecover, Target: "a", Nodes: []Node{a, b, c}, Members: members},
			Plan{}},
		{"node recover that recreated the node replaces its member at the same address", Request{Phase: After, Action: NodeRecover, Target: "a", Recreated: true, Nodes: []Node{a, b, c}, Members: members},
			Plan{Readdress: []Node{a}}},
		{"node recover of a node not yet a member joins it", Request{Phase: After, Action: NodeRecover, Target: "d", Nodes: []Node{a, d}, Members: members[:1]},
			Plan{Join: []Node{d}, Ready: []string{"d"}}},
		{"scale out joins the new nodes", Request{Phase: After, Action: ClusterScaleOut, Nodes: []Node{a, b, c, d, e}, Members: members},
			Plan{Join: []Node{d, e}, Ready: []string{"d", "e"}}},
		{"resize up joins the new nodes", Request{Phase: After, Action: ClusterResize, Nodes: []Node{a, b, c, d}, Members: members},
			Plan{Join: []Node{d}, Ready: []string{"d"}}},
		{"add nodes joins the named nodes", Request{Phase: After, Action: ClusterAddNodes, AddNodes: []string{"d"}, Nodes: []Node{a, b, c, d}, Members: members},
			Plan{Join: []Node{d}, Ready: []string{"d"}}},
		{"replace nodes joins the replacements", Request{Phase: After, Action: ClusterReplaceNodes, Replace: map[string]string{"a": "d", "b": "e"}, Nodes: []Node{c, d, e}, Members: members[2:]},
			Plan{Join: []Node{d, e}, Ready: []string{"d", "e"}}},
		{"replace nodes: the originals leave first", Request{Phase: Before, Action: ClusterReplaceNodes, Replace: map[string]string{"b": "e", "a": "d"}, Nodes: []Node{a, b, c, d, e}, Members: members},
			Plan{Leave: []string{"a", "b"}}},
		{"node delete: the node leaves", Request{Phase: Before, Action: NodeDelete, Target: "b", Nodes: []Node{a, b, c}, Members: members},
			Plan{Leave: []string{"b"}}},
		{"node delete of a non-member changes nothing", Request{Phase: Before, Action: NodeDelete, Target: "x", Nodes: []Node{a}, Members: members},
			Plan{}},
		{"del nodes: the named nodes leave", Request{Phase: Before, Action: ClusterDelNodes, DelNodes: []string{"a", "c"}, Nodes: []Node{a, b, c}, Members: members},
			Plan{Leave: []string{"a", "c"}}},
		{"del nodes: the deletion policy's candidates win", Request{Phase: Before, Action: ClusterDelNodes, DelNodes: []string{"a"}, Deletion: []string{"c"}, Nodes: []Node{a, b, c}, Members: members},
			Plan{Leave: []string{"c"}}},
		{"scale in: the deletion policy's victims leave", Request{Phase: Before, Action: ClusterScaleIn, Deletion: []string{"b", "c"}, Nodes: []Node{a, b, c}, Members: members},
			Plan{Leave: []string{"b", "c"}}},
		{"scale in without a deletion policy picks and records victims", Request{Phase: Before, Action: ClusterScaleIn, ScaleCount: ptr(2), Nodes: []Node{a, b, c}, Members: members, Shuffle: reverse},
			Plan{Leave: []string{"c", "b"}, Victims: []string{"c", "b"}}},
		{"scale in counts one by default", Request{Phase: Before, Action: ClusterScaleIn, Nodes: []Node{a, b, c}, Members: members, Shuffle: reverse},
			Plan{Leave: []string{"c"}, Victims: []string{"c"}}},
		{"scale in takes an earlier policy's count", Request{Phase: Before, Action: ClusterScaleIn, DeletionCount: ptr(3), Nodes: []Node{a, b, c}, Members: members, Shuffle: reverse},
			Plan{Leave: []string{"c", "b", "a"}, Victims: []string{"c", "b", "a"}}},
		{"scale in picks ERROR nodes first", Request{Phase: Before, Action: ClusterScaleIn, Nodes: []Node{a, {ID: "b", Status: "ERROR", Address: "127.0.0.1:2", CreatedAt: 1}, c}, Members: members, Shuffle: reverse},
			Plan{Leave: []string{"b"}, Victims: []string{"b"}}},
		{"resize down picks victims by the resize", Request{Phase: Before, Action: ClusterResize, Nodes: []Node{a, b, c}, Members: members, Shuffle: reverse,
			Resize: scaling.Resize{AdjustmentType: "EXACT_CAPACITY", Number: ptr(1.0), Strict: true}, Bounds: scaling.Bounds{Desired: 3, Min: 0, Max: -1}},
			Plan{Leave: []string{"c", "b"}, Victims: []string{"c", "b"}}},
		{"resize up removes nothing before", Request{Phase: Before, Action: ClusterResize, Nodes: []Node{a, b, c}, Members: members,
			Resize: scaling.Resize{AdjustmentType: "EXACT_CAPACITY", Number: ptr(5.0), Strict: true}, Bounds: scaling.Bounds{Desired: 3, Min: 0, Max: -1}},
			Plan{}},
		{"detach: every member leaves", Request{Phase: Detach, Action: Detach, Nodes: []Node{a, b, c}, Members: members},
			Plan{Leave: []string{"a", "b", "c"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decide(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Decide:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestDecideCoversTargets fails when a target is added without a case:
// every target must be decidable.
func TestDecideCoversTargets(t *testing.T) {
	for _, tg := range Targets {
		r := Request{Phase: tg[0], Action: tg[1], Target: "a", Nodes: []Node{node("a", "127.0.0.1:1")},
			Bounds: scaling.Bounds{Desired: 1, Max: -1}, Resize: scaling.Resize{AdjustmentType: "EXACT_CAPACITY", Number: ptr(1.0)}}
		if _, err := Decide(r); err != nil {
			t.Errorf("%s %s: %v", tg[0], tg[1], err)
		}
	}
	if _, err := Decide(Request{Phase: Before, Action: NodeCreate}); err == nil {
		t.Error("BEFORE NODE_CREATE is not a target and must be refused")
	}
	if _, err := Decide(Request{Phase: After, Action: NodeDelete}); err == nil {
		t.Error("AFTER NODE_DELETE is not a target and must be refused")
	}
}

func TestAddress(t *testing.T) {
	cases := []struct {
		data map[string]any
		def  int
		want string
	}{
		{map[string]any{"address": "127.0.0.1:8080", "port": float64(8080)}, 0, "127.0.0.1:8080"},
		{map[string]any{"address": "10.0.0.5"}, 80, "10.0.0.5:80"},
		{map[string]any{"address": "10.0.0.5", "port": float64(8443)}, 80, "10.0.0.5:8443"},
		{map[string]any{"address": "fd00::5"}, 80, "[fd00::5]:80"},
		{map[string]any{"address": "10.0.0.5"}, 0, ""},
		{map[string]any{}, 80, ""},
	}
	for _, tc := range cases {
		if got := Address(tc.data, tc.def); got != tc.want {
			t.Errorf("Address(%v, %d) = %q, want %q", tc.data, tc.def, got, tc.want)
		}
	}
}

// TestFromCheck reads each action's inputs into a request.
func TestFromCheck(t *testing.T) {
	req := func(name string, in map[string]any) sdk.CheckRequest {
		return sdk.CheckRequest{Phase: After, Action: sdk.Action{Name: name, Target: "n1", Inputs: in, Data: map[string]any{}}}
	}
	if r, err := FromCheck(req(NodeRecover, map[string]any{"operation": "REBOOT"})); err != nil || r.Recreated {
		t.Errorf("a reboot is not a recreation: %+v %v", r, err)
	}
	if r, err := FromCheck(req(NodeRecover, map[string]any{})); err != nil || !r.Recreated {
		t.Errorf("RECREATE is the default recovery: %+v %v", r, err)
	}
	if r, err := FromCheck(req(ClusterReplaceNodes, map[string]any{"candidates": map[string]any{"a": "b"}})); err != nil || r.Replace["a"] != "b" {
		t.Errorf("replace: %+v %v", r, err)
	}
	if r, err := FromCheck(req(ClusterDelNodes, map[string]any{"candidates": []any{"a"}})); err != nil || !slices.Equal(r.DelNodes, []string{"a"}) {
		t.Errorf("del nodes: %+v %v", r, err)
	}
	if _, err := FromCheck(req(ClusterScaleIn, map[string]any{"count": "many"})); err == nil {
		t.Error("an unreadable count must be an error")
	}
	a := sdk.Action{Data: map[string]any{"deletion": map[string]any{"grace_period": 5}}}
	got := VictimsData(a, []string{"x", "y"})
	if got["grace_period"] != 5 || got["count"] != 2 || !slices.Equal(got["candidates"].([]string), []string{"x", "y"}) {
		t.Errorf("VictimsData keeps the earlier decision's flags: %v", got)
	}
}
