package server

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

func (s *Server) listActions(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	o, err := listOpts(r, c, []string{"name", "cluster_id", "target", "action", "status"}, []string{"name", "target", "action", "created_at", "status"})
	if err != nil {
		return err
	}
	as, err := s.s.ListActions(s.ctx(r), o)
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
	a, err := s.s.FindAction(s.ctx(r), c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	kids, err := s.s.Children(s.ctx(r), a.ID)
	if err != nil {
		return err
	}
	ids := make([]string, len(kids))
	for i, k := range kids {
		ids[i] = k.ID
	}
	out := toAction(a, ids, a.ParentID)
	out.Progress = actionProgress(a, kids)
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
// outputs. It reads only what showAction has already loaded.
func actionProgress(a *model.Action, kids []*model.Action) *api.ActionProgress {
	p := &api.ActionProgress{Nodes: len(kids)}
	pending := map[string]int{}
	for _, k := range kids {
		switch k.Status {
		case model.ActionSucceeded:
			p.Done++
		case model.ActionFailed, model.ActionCancelled:
			p.Failed++
		default:
			pending[k.Action]++
		}
	}
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
		} else if most == 0 && len(kids) > 0 {
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
	force := r.URL.Query().Get("force") == "true"
	a, err := s.e.CancelAction(s.ctx(r), c, r.PathValue("id"), force)
	if err != nil {
		return err
	}
	return s.accepted(w, a, map[string]any{"action": toAction(a, nil, a.ParentID)})
}
