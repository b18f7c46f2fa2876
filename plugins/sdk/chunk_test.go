package sdk

import (
	"fmt"
	"strings"
	"testing"
)

// TestSplitNodes: batches keep the given order, never pass the node bound,
// stay under the byte bound unless a single node is over it (then it
// travels alone), and zero bounds take the defaults.
func TestSplitNodes(t *testing.T) {
	node := func(id string, data int) Node {
		n := Node{ID: id}
		if data > 0 {
			n.Data = map[string]any{"d": strings.Repeat("x", data)}
		}
		return n
	}
	ids := func(bs []NodeBatch) [][]string {
		var out [][]string
		for _, b := range bs {
			var one []string
			for _, n := range b.Nodes {
				one = append(one, n.ID)
			}
			out = append(out, one)
		}
		return out
	}
	cases := []struct {
		name             string
		nodes            []Node
		maxNodes, maxLen int
		want             string
	}{
		{"empty", nil, 2, 1000, ""},
		{"by count", []Node{node("a", 0), node("b", 0), node("c", 0), node("d", 0), node("e", 0)}, 2, 1000, "a,b|c,d|e"},
		{"by bytes", []Node{node("a", 300), node("b", 300), node("c", 300), node("d", 300)}, 10, 700, "a,b|c,d"},
		{"one node over the bound travels alone", []Node{node("a", 10), node("big", 5000), node("c", 10)}, 10, 1000, "a|big|c"},
		{"default bounds", []Node{node("a", 0), node("b", 0)}, 0, 0, "a,b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bs := SplitNodes(c.nodes, c.maxNodes, c.maxLen)
			var parts []string
			for _, b := range ids(bs) {
				parts = append(parts, strings.Join(b, ","))
			}
			if got := strings.Join(parts, "|"); got != c.want {
				t.Errorf("batches %q, want %q", got, c.want)
			}
			for _, b := range bs {
				if len(b.wire) != len(b.Nodes) {
					t.Errorf("batch of %d nodes carries %d wire nodes", len(b.Nodes), len(b.wire))
				}
			}
		})
	}
	many := make([]Node, DefaultBatchNodes+1)
	for i := range many {
		many[i] = node("n", 0)
	}
	if bs := SplitNodes(many, 0, 0); len(bs) != 2 || len(bs[0].Nodes) != DefaultBatchNodes {
		t.Errorf("%d nodes with the defaults: %d batches", len(many), len(bs))
	}
}

// TestSplitJSONNodes: nodes whose documents are JSON already are cut by
// the same bounds, and reach the driver as the same nodes SplitNodes
// sends: an empty document travels as none.
func TestSplitJSONNodes(t *testing.T) {
	nodes := []Node{
		{ID: "a", Name: "a", Index: 1, ClusterID: "c", ClusterName: "cn", PhysicalID: "pa", State: []byte{1}, Data: map[string]any{"pid": float64(7)}, Metadata: map[string]any{"k": "v"}},
		{ID: "b", Name: "b", Index: 2, ClusterID: "c", ClusterName: "cn"},
		{ID: "c", Name: "c", Index: 3, ClusterID: "c", ClusterName: "cn", Data: map[string]any{"d": strings.Repeat("x", 600)}},
	}
	raw := make([]JSONNode, len(nodes))
	for i, n := range nodes {
		raw[i] = JSONNode{ID: n.ID, Name: n.Name, Index: n.Index, ClusterID: n.ClusterID, ClusterName: n.ClusterName, PhysicalID: n.PhysicalID, State: n.State,
			Data: encodeJSON(n.Data), Metadata: encodeJSON(n.Metadata)}
	}
	raw[1].Data, raw[1].Metadata = []byte("{}"), []byte("{}")
	want := SplitNodes(nodes, 10, 700)
	got := SplitJSONNodes(raw, 10, 700)
	if len(got) != len(want) || len(got) != 2 {
		t.Fatalf("%d batches, want %d (2)", len(got), len(want))
	}
	for i := range got {
		if got[i].Len() != want[i].Len() || strings.Join(got[i].IDs(), ",") != strings.Join(want[i].IDs(), ",") {
			t.Fatalf("batch %d: %v, want %v", i, got[i].IDs(), want[i].IDs())
		}
		for j, w := range got[i].wire {
			if g, n := NodeFromProto(w), NodeFromProto(want[i].wire[j]); fmt.Sprintf("%+v", g) != fmt.Sprintf("%+v", n) {
				t.Errorf("batch %d node %d reaches the driver as %+v, want %+v", i, j, g, n)
			}
		}
	}
	if got[0].wire[1].DataJson != nil || got[0].wire[1].MetadataJson != nil {
		t.Errorf("empty documents travel as %q and %q", got[0].wire[1].DataJson, got[0].wire[1].MetadataJson)
	}
}
