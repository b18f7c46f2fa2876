package sdk

import (
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
