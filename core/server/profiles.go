package server

import (
	"net/http"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
)

var profileSort = []string{"name", "type", "created_at", "updated_at"}

func (s *Server) listProfiles(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	o, err := listOpts(r, c, []string{"name", "type"}, profileSort)
	if err != nil {
		return err
	}
	ps, err := s.s.ListProfiles(s.ctx(r), o)
	if err != nil {
		return err
	}
	out := make([]api.Profile, 0, len(ps))
	for _, p := range ps {
		out = append(out, toProfile(p))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"profiles": out})
	return nil
}

func (s *Server) createProfile(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "profile")
	if err != nil {
		return err
	}
	if err := only(body, "profile.", "name", "spec", "metadata"); err != nil {
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
	meta, err := metadata(body, "metadata")
	if err != nil {
		return err
	}
	p, err := s.e.CreateProfile(s.ctx(r), c, deref(name), spec, meta)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, map[string]any{"profile": toProfile(p)})
	return nil
}

func (s *Server) validateProfile(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "profile")
	if err != nil {
		return err
	}
	spec, err := object(body, "spec")
	if err != nil {
		return err
	}
	p, err := s.e.ValidateProfile(s.ctx(r), c, spec)
	if err != nil {
		return err
	}
	doc, err := validated(toProfile(p))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"profile": doc})
	return nil
}

func (s *Server) showProfile(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	p, err := s.s.FindProfile(s.ctx(r), c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"profile": toProfile(p)})
	return nil
}

func (s *Server) updateProfile(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "profile")
	if err != nil {
		return err
	}
	if err := only(body, "profile.", "name", "spec", "metadata"); err != nil {
		return err
	}
	if spec, ok := body["spec"].(map[string]any); ok || body["spec"] != nil {
		if err := s.e.CheckSpecUnchanged(s.ctx(r), c, "profile", r.PathValue("id"), spec); err != nil {
			return err
		}
	}
	name, err := nameField(body, "name")
	if err != nil {
		return err
	}
	meta, err := metadata(body, "metadata")
	if err != nil {
		return err
	}
	p, err := s.e.UpdateProfile(s.ctx(r), c, r.PathValue("id"), name, meta)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"profile": toProfile(p)})
	return nil
}

func (s *Server) deleteProfile(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	if err := s.e.DeleteProfile(s.ctx(r), c, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
