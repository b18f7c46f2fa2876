package server

import (
	"testing"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

// countsOf counts actions by kind and status as CountChildren does.
func countsOf(kids []*model.Action) []store.ChildCount {
	var out []store.ChildCount
next:
	for _, k := range kids {
		for i := range out {
			if out[i].Action == k.Action && out[i].Status == k.Status {
				out[i].N++
				continue next
			}
		}
		out = append(out, store.ChildCount{Action: k.Action, Status: k.Status, N: 1})
	}
	return out
}

func TestActionProgress(t *testing.T) {
	kid := func(kind, status string) *model.Action { return &model.Action{Action: kind, Status: status} }
	update := func(status string, batch, batches, total, updated, failures int) map[string]any {
		return map[string]any{"update": map[string]any{"status": status, "batch": float64(batch), "batches": float64(batches),
			"total": float64(total), "updated": float64(updated), "failures": float64(failures)}}
	}
	cases := []struct {
		name   string
		action *model.Action
		kids   []*model.Action
		want   api.ActionProgress
	}{
		{"a queued action waits for a worker", &model.Action{Status: model.ActionReady}, nil,
			api.ActionProgress{Step: "waiting for a worker"}},
		{"a create counts its node creates by outcome",
			&model.Action{Status: model.ActionRunning},
			[]*model.Action{kid(model.NodeCreateAction, model.ActionSucceeded), kid(model.NodeCreateAction, model.ActionRunning),
				kid(model.NodeCreateAction, model.ActionReady), kid(model.NodeCreateAction, model.ActionFailed)},
			api.ActionProgress{Step: "creating nodes", Nodes: 4, Done: 1, Failed: 1}},
		{"the most frequent pending kind names the step",
			&model.Action{Status: model.ActionRunning},
			[]*model.Action{kid(model.NodeDeleteAction, model.ActionRunning), kid(model.NodeCreateAction, model.ActionRunning),
				kid(model.NodeDeleteAction, model.ActionReady)},
			api.ActionProgress{Step: "deleting nodes", Nodes: 3}},
		{"a tie goes to the first kind in name order",
			&model.Action{Status: model.ActionRunning},
			[]*model.Action{kid(model.NodeDeleteAction, model.ActionRunning), kid(model.NodeCreateAction, model.ActionRunning)},
			api.ActionProgress{Step: "creating nodes", Nodes: 2}},
		{"children all done: the action is finishing",
			&model.Action{Status: model.ActionRunning},
			[]*model.Action{kid(model.NodeCreateAction, model.ActionSucceeded)},
			api.ActionProgress{Step: "finishing", Nodes: 1, Done: 1}},
		{"no children: running", &model.Action{Status: model.ActionRunning}, nil, api.ActionProgress{Step: "running"}},
		{"a rolling update counts its nodes and batches, not its children",
			&model.Action{Status: model.ActionRunning, Outputs: update(api.UpdateUpdating, 2, 4, 8, 2, 1)},
			[]*model.Action{kid(model.NodeUpdateAction, model.ActionSucceeded), kid(model.NodeUpdateAction, model.ActionSucceeded),
				kid(model.NodeUpdateAction, model.ActionRunning), kid(model.NodeUpdateAction, model.ActionRunning)},
			api.ActionProgress{Step: "updating nodes", Nodes: 8, Done: 2, Failed: 1, Batch: 2, Batches: 4}},
		{"a rolling update watches a batch's nodes until the batch is counted",
			&model.Action{Status: model.ActionRunning, Outputs: update(api.UpdateUpdating, 1, 4, 8, 0, 0),
				Data: map[string]any{"update.batch1": map[string]any{"nodes": []any{"a", "b"}, "counted": false}}},
			[]*model.Action{kid(model.NodeUpdateAction, model.ActionSucceeded), kid(model.NodeUpdateAction, model.ActionSucceeded)},
			api.ActionProgress{Step: "watching the batch's nodes", Nodes: 8, Batch: 1, Batches: 4}},
		{"a counted batch: the update waits before the next",
			&model.Action{Status: model.ActionRunning, Outputs: update(api.UpdateUpdating, 1, 4, 8, 2, 0),
				Data: map[string]any{"update.batch1": map[string]any{"nodes": []any{"a", "b"}, "counted": true}}},
			[]*model.Action{kid(model.NodeUpdateAction, model.ActionSucceeded), kid(model.NodeUpdateAction, model.ActionSucceeded)},
			api.ActionProgress{Step: "waiting before the next batch", Nodes: 8, Done: 2, Batch: 1, Batches: 4}},
		{"an automatic rollback's batches are its own",
			&model.Action{Status: model.ActionRunning, Outputs: update(api.UpdateRollingBack, 1, 1, 2, 0, 0),
				Data: map[string]any{"rollback": map[string]any{}, "update.batch1": map[string]any{"counted": true},
					"rollback.batch1": map[string]any{"counted": false}}},
			nil,
			api.ActionProgress{Step: "watching the batch's nodes", Nodes: 2, Batch: 1, Batches: 1}},
		{"an ended action's step is its status",
			&model.Action{Status: model.ActionFailed}, []*model.Action{kid(model.NodeCreateAction, model.ActionFailed)},
			api.ActionProgress{Step: "failed", Nodes: 1, Failed: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := actionProgress(tc.action, countsOf(tc.kids)); *got != tc.want {
				t.Errorf("actionProgress = %+v, want %+v", *got, tc.want)
			}
		})
	}
}
