package server

import (
	"net/http"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
)

func (s *Server) listPolicies(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	o, err := listOpts(r, c, []string{"name", "type"}, profileSort)
	if err != nil {
		return err
	}
	ps, err := s.s.ListPolicies(s.ctx(r), o)
	if err != nil {
		return err
	}
	out := make([]api.Policy, 0, len(ps))
	for _, p := range ps {
		out = append(out, toPolicy(p))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"policies": out})
	return nil
}

func (s *Server) createPolicy(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "policy")
	if err != nil {
		return err
	}
	if err := only(body, "policy.", "name", "spec"); err != nil {
		return err
	}
	name, err := nameField(body, "name")
	if err != nil {
		return err
	}
	spec, err := object(body, "spec")
	if err != nil {
		return err
	}
	p, err := s.e.CreatePolicy(s.ctx(r), c, deref(name), spec)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, map[string]any{"policy": toPolicy(p)})
	return nil
}

func (s *Server) validatePolicy(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "policy")
	if err != nil {
		return err
	}
	spec, err := object(body, "spec")
	if err != nil {
		return err
	}
	p, err := s.e.ValidatePolicy(s.ctx(r), c, spec)
	if err != nil {
		return err
	}
	doc, err := validated(toPolicy(p))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"policy": doc})
	return nil
}

func (s *Server) showPolicy(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	p, err := s.s.FindPolicy(s.ctx(r), c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"policy": toPolicy(p)})
	return nil
}

func (s *Server) updatePolicy(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "policy")
	if err != nil {
		return err
	}
	if err := only(body, "policy.", "name", "spec"); err != nil {
		return err
	}
	if spec, ok := body["spec"].(map[string]any); ok || body["spec"] != nil {
		if err := s.e.CheckSpecUnchanged(s.ctx(r), c, "policy", r.PathValue("id"), spec); err != nil {
			return err
		}
	}
	name, err := nameField(body, "name")
	if err != nil {
		return err
	}
	p, err := s.e.UpdatePolicy(s.ctx(r), c, r.PathValue("id"), name)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"policy": toPolicy(p)})
	return nil
}

func (s *Server) deletePolicy(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	if err := s.e.DeletePolicy(s.ctx(r), c, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
