package server

import (
	"net/http"

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
	s.writeJSON(w, http.StatusOK, map[string]any{"action": toAction(a, ids, a.ParentID)})
	return nil
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
