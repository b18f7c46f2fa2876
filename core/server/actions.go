package server

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

func (s *Server) listActions(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	o, err := listOpts(r, c, []string{"name", "cluster_id", "target", "action", "status", "parent_id"}, []string{"name", "target", "action", "created_at", "status"})
	if err != nil {
		return err
	}
	as, err := s.r.ListActions(s.ctx(r), o)
	if err != nil {
		return err
	}
	out := make([]api.Action, 0, len(as))
	for _, a := range as {
		out = append(out, toAction(a, nil, a.ParentID))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"actions": out})
	return nil
}

func (s *Server) showAction(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	ctx := s.ctx(r)
	a, err := s.r.FindAction(ctx, c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	// Ids and counts come from indexes; no child row is decoded, so the
	// read costs the same for 10 children as for 100,000.
	ids, err := s.r.ChildIDs(ctx, a.ID, api.MaxInlineIDs+1)
	if err != nil {
		return err
	}
	counts, err := s.r.CountChildren(ctx, a.ID)
	if err != nil {
		return err
	}
	var sum *api.IDsSummary
	if len(ids) > api.MaxInlineIDs {
		ids = ids[:api.MaxInlineIDs]
		sum = &api.IDsSummary{Shown: len(ids), ByStatus: map[string]int{},
			Next: "/v1/actions?" + url.Values{"parent_id": {a.ID}, "limit": {strconv.Itoa(api.MaxInlineIDs)}, "marker": {ids[len(ids)-1]}}.Encode()}
		for _, n := range counts {
			sum.Total += n.N
			sum.ByStatus[n.Status] += n.N
		}
	}
	out := toAction(a, ids, a.ParentID)
	out.DependsOnSummary = sum
	out.Progress = actionProgress(a, counts)
	s.writeJSON(w, http.StatusOK, map[string]any{"action": out})
	return nil
}

// childSteps names what an action is doing while children of a kind run.
var childSteps = map[string]string{
	model.NodeCreateAction:    "creating nodes",
	model.NodeDeleteAction:    "deleting nodes",
	model.NodeUpdateAction:    "updating nodes",
	model.NodeCheckAction:     "checking nodes",
	model.NodeRecoverAction:   "recovering nodes",
	model.NodeOperationAction: "running node operations",
}

// actionProgress says how far a has come from its children and, for a
// rolling update, the progress the update publishes in the action's
// outputs. It reads only the children's counts by kind and status.
func actionProgress(a *model.Action, kids []store.ChildCount) *api.ActionProgress {
	p := &api.ActionProgress{}
	pending := map[string]int{}
	for _, k := range kids {
		p.Nodes += k.N
		switch k.Status {
		case model.ActionSucceeded:
			p.Done += k.N
		case model.ActionFailed, model.ActionCancelled:
			p.Failed += k.N
		default:
			pending[k.Action] += k.N
		}
	}
	children := p.Nodes
	var u api.UpdateProgress
	updating := false
	if raw, ok := a.Outputs["update"]; ok {
		if b, err := json.Marshal(raw); err == nil && json.Unmarshal(b, &u) == nil && u.Total > 0 {
			// Children accumulate over batches (and a start-first batch
			// forks creates and deletes): the update's own count is the
			// one that means nodes.
			updating = true
			p.Nodes, p.Done, p.Failed, p.Batch, p.Batches = u.Total, u.Updated, u.Failures, u.Batch, u.Batches
		}
	}
	switch a.Status {
	case model.ActionInit, model.ActionReady:
		p.Step = "waiting for a worker"
	case model.ActionWaiting:
		p.Step = "waiting for the actions it depends on"
	case model.ActionRunning:
		p.Step = "running"
		// The most frequent pending kind names the step; ties go to the
		// first in name order, so the step does not flicker.
		kinds := slices.Sorted(maps.Keys(pending))
		most := 0
		for _, kind := range kinds {
			if n := pending[kind]; n > most {
				most = n
				p.Step = childSteps[kind]
				if p.Step == "" {
					p.Step = "waiting for " + strings.ToLower(strings.ReplaceAll(kind, "_", " ")) + " actions"
				}
			}
		}
		if most == 0 && updating && u.Status != api.UpdateCompleted && u.Status != api.UpdateRolledBack {
			// The engine records each batch in the action's data and
			// marks it counted once its monitor period judged its nodes
			// (update.go, batchRecord); an automatic rollback records
			// its batches under "rollback".
			prefix := "update"
			if a.Data["rollback"] != nil {
				prefix = "rollback"
			}
			rec, _ := a.Data[fmt.Sprintf("%s.batch%d", prefix, u.Batch)].(map[string]any)
			if counted, _ := rec["counted"].(bool); counted {
				p.Step = "waiting before the next batch"
			} else {
				p.Step = "watching the batch's nodes"
			}
		} else if most == 0 && children > 0 {
			p.Step = "finishing"
		}
	default:
		p.Step = strings.ToLower(a.Status)
	}
	return p
}

func (s *Server) updateAction(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "action")
	if err != nil {
		return err
	}
	status, err := str(body, "status")
	if err != nil {
		return err
	}
	if status == nil || *status != model.ActionCancelled {
		return engine.BadRequest("action.status: only CANCELLED is accepted when updating an action.")
	}
	force, err := queryBool(r, "force")
	if err != nil {
		return err
	}
	a, err := s.e.CancelAction(s.ctx(r), c, r.PathValue("id"), force)
	if err != nil {
		return err
	}
	return s.accepted(w, a, map[string]any{"action": toAction(a, nil, a.ParentID)})
}
