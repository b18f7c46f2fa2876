package engine_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

// resizeCase is a resize or scale of a cluster of built-in grove.noop nodes,
// sent as the API sends it.
type resizeCase struct {
	name string
	from size   // the cluster before: nodes (its desired_capacity), min and max
	body string // the cluster action
	want size
	// refused is the error the request gets at submit; failed is the
	// reason the action fails with. Either way nothing changes.
	refused, failed string
}

var resizeCases = []resizeCase{
	// EXACT_CAPACITY
	{name: "exact capacity grows", from: size{2, 2, 0, -1}, body: `{"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 5}}`, want: size{5, 5, 0, -1}},
	{name: "exact capacity shrinks", from: size{3, 3, 0, -1}, body: `{"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 1}}`, want: size{1, 1, 0, -1}},
	{name: "exact capacity to zero", from: size{2, 2, 0, -1}, body: `{"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 0}}`, want: size{0, 0, 0, -1}},
	{name: "exact capacity with new bounds", from: size{2, 2, 0, 3}, body: `{"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 6, "max_size": 8}}`, want: size{6, 6, 0, 8}},
	// CHANGE_IN_CAPACITY
	{name: "change in capacity grows", from: size{2, 2, 0, -1}, body: `{"resize": {"adjustment_type": "CHANGE_IN_CAPACITY", "number": 2}}`, want: size{4, 4, 0, -1}},
	{name: "change in capacity shrinks", from: size{3, 3, 0, -1}, body: `{"resize": {"adjustment_type": "CHANGE_IN_CAPACITY", "number": -2}}`, want: size{1, 1, 0, -1}},
	// CHANGE_IN_PERCENTAGE
	{name: "percentage growth rounds down", from: size{5, 5, 0, -1}, body: `{"resize": {"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": 50}}`, want: size{7, 7, 0, -1}},
	{name: "percentage shrink rounds toward zero", from: size{5, 5, 0, -1}, body: `{"resize": {"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": -50}}`, want: size{3, 3, 0, -1}},
	{name: "percentage under one node is one node", from: size{4, 4, 0, -1}, body: `{"resize": {"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": 10}}`, want: size{5, 5, 0, -1}},
	{name: "percentage under one node removes one node", from: size{4, 4, 0, -1}, body: `{"resize": {"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": -10}}`, want: size{3, 3, 0, -1}},
	{name: "min_step raises a small growth", from: size{4, 4, 0, -1}, body: `{"resize": {"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": 10, "min_step": 2}}`, want: size{6, 6, 0, -1}},
	{name: "min_step raises a small shrink", from: size{5, 5, 0, -1}, body: `{"resize": {"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": -10, "min_step": 3}}`, want: size{2, 2, 0, -1}},
	{name: "min_step below the step changes nothing", from: size{4, 4, 0, -1}, body: `{"resize": {"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": 50, "min_step": 1}}`, want: size{6, 6, 0, -1}},
	// strict against the cluster's bounds
	{name: "strict above max is refused", from: size{2, 2, 0, 4}, body: `{"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 5, "strict": true}}`,
		refused: "The target capacity (5) is greater than the cluster's max_size (4)."},
	{name: "strict is the default", from: size{2, 2, 0, 4}, body: `{"resize": {"adjustment_type": "CHANGE_IN_CAPACITY", "number": 3}}`,
		refused: "The target capacity (5) is greater than the cluster's max_size (4)."},
	{name: "not strict above max is cut to max", from: size{2, 2, 0, 4}, body: `{"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 5, "strict": false}}`, want: size{4, 4, 0, 4}},
	{name: "strict below min is refused", from: size{3, 3, 2, -1}, body: `{"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 1}}`,
		refused: "The target capacity (1) is less than the cluster's min_size (2)."},
	{name: "not strict below min is raised to min", from: size{3, 3, 2, -1}, body: `{"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 1, "strict": false}}`, want: size{2, 2, 2, -1}},
	{name: "not strict is cut to the new max", from: size{2, 2, 0, -1}, body: `{"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 10, "max_size": 6, "strict": false}}`, want: size{6, 6, 0, 6}},
	{name: "strict below the new min is refused", from: size{2, 2, 0, -1}, body: `{"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 1, "min_size": 2}}`,
		refused: "The target capacity (1) is less than the specified min_size (2)."},
	// min_size and max_size alone
	{name: "min_size above desired is refused when strict", from: size{2, 2, 0, -1}, body: `{"resize": {"min_size": 3}}`,
		refused: "The specified min_size (3) is greater than the current desired_capacity (2) of the cluster."},
	{name: "min_size above desired grows the cluster when not strict", from: size{2, 2, 0, -1}, body: `{"resize": {"min_size": 3, "strict": false}}`, want: size{3, 3, 3, -1}},
	{name: "max_size below desired is refused when strict", from: size{4, 4, 0, -1}, body: `{"resize": {"max_size": 2}}`,
		refused: "The specified max_size (2) is less than the current desired_capacity (4) of the cluster."},
	{name: "max_size below desired shrinks the cluster when not strict", from: size{4, 4, 0, -1}, body: `{"resize": {"max_size": 2, "strict": false}}`, want: size{2, 2, 0, 2}},
	{name: "new bounds around the size keep the nodes", from: size{2, 2, 0, -1}, body: `{"resize": {"min_size": 1, "max_size": 5}}`, want: size{2, 2, 1, 5}},
	{name: "max_size -1 lifts the bound", from: size{2, 2, 0, 3}, body: `{"resize": {"max_size": -1}}`, want: size{2, 2, 0, -1}},
	{name: "min_size above max_size is refused", from: size{2, 2, 0, -1}, body: `{"resize": {"min_size": 5, "max_size": 3}}`,
		refused: "The specified min_size (5) is greater than the specified max_size (3)."},
	// numeric strings are plain decimal
	{name: "number as a decimal string", from: size{2, 2, 0, -1}, body: `{"resize": {"adjustment_type": "EXACT_CAPACITY", "number": "3"}}`, want: size{3, 3, 0, -1}},
	{name: "number with a digit separator is refused", from: size{2, 2, 0, -1}, body: `{"resize": {"adjustment_type": "EXACT_CAPACITY", "number": "1_0"}}`,
		refused: `resize.number must be a number, got "1_0".`},
	{name: "hexadecimal min_size is refused", from: size{2, 2, 0, -1}, body: `{"resize": {"min_size": "0x1p0"}}`,
		refused: `resize.min_size must be a number, got "0x1p0".`},
	{name: "scale out count in hexadecimal is refused", from: size{2, 2, 0, -1}, body: `{"scale_out": {"count": "0x1p1"}}`,
		refused: `scale_out.count must be a positive integer of at most 2147483647, got "0x1p1".`},
	// scale-out and scale-in
	{name: "scale out by count", from: size{2, 2, 0, -1}, body: `{"scale_out": {"count": 3}}`, want: size{5, 5, 0, -1}},
	{name: "scale out without count adds one", from: size{2, 2, 0, -1}, body: `{"scale_out": {}}`, want: size{3, 3, 0, -1}},
	{name: "scale in by count", from: size{4, 4, 0, -1}, body: `{"scale_in": {"count": 3}}`, want: size{1, 1, 0, -1}},
	{name: "scale in without count removes one", from: size{2, 2, 0, -1}, body: `{"scale_in": {}}`, want: size{1, 1, 0, -1}},
	{name: "scale in past zero removes every node", from: size{2, 2, 0, -1}, body: `{"scale_in": {"count": 5}}`, want: size{0, 0, 0, -1}},
	{name: "scale out past max fails", from: size{3, 3, 0, 3}, body: `{"scale_out": {"count": 1}}`,
		failed: "The target capacity (4) is greater than the cluster's max_size (3)."},
	{name: "scale in past min fails", from: size{2, 2, 2, -1}, body: `{"scale_in": {}}`,
		failed: "The target capacity (1) is less than the cluster's min_size (2)."},
}

// TestResize runs each resize adjustment, scale-in and scale-out through the
// engine on built-in grove.noop nodes and checks the nodes and sizes that
// result. A cluster that shrinks without a deletion policy keeps its lowest
// indexes (§B.3); one that grows numbers its new nodes on from its highest,
// so either way the indexes run from 1 to the node count. A
// request refused at submit, or an action that fails, changes nothing.
func TestResize(t *testing.T) {
	h := newHarness(t, nil)
	h.profileOf("noop", "grove.noop", map[string]any{})
	for _, c := range resizeCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := h.sub(t)
			desired, min, max := c.from.nodes, c.from.min, c.from.max
			cl := h.create(engine.ClusterCreate{Name: strings.ReplaceAll(c.name, " ", "-"), Profile: "noop", DesiredCapacity: &desired, MinSize: &min, MaxSize: &max})
			before := ids(h.nodes(cl.ID))
			a, err := h.act(cl, c.body)
			switch {
			case c.refused != "":
				var e *engine.Error
				if err == nil || !errors.As(err, &e) || e.Status != 400 || e.Error() != c.refused {
					t.Fatalf("submit: %v, want the 400 %q", err, c.refused)
				}
			case c.failed != "":
				end := h.wait(a, err)
				if end.Status != model.ActionFailed || end.StatusReason != c.failed {
					t.Fatalf("%s ended %s %q, want FAILED %q", end.Action, end.Status, end.StatusReason, c.failed)
				}
			default:
				h.ok(a, err)
			}
			if c.refused != "" || c.failed != "" {
				h.assertSize(cl.ID, c.from)
				if after := ids(h.nodes(cl.ID)); !slices.Equal(after, before) {
					t.Errorf("the nodes changed from %v to %v", before, after)
				}
				return
			}
			h.assertSize(cl.ID, c.want)
			got := h.indexes(cl.ID)
			var want []int
			for i := 1; i <= c.want.nodes; i++ {
				want = append(want, i)
			}
			if !slices.Equal(got, want) {
				t.Errorf("node indexes %v, want %v", got, want)
			}
		})
	}
}
