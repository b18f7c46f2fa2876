package server

import (
	"net/http"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/store"
)

// Definition sets are Grove's own, for `grove apply`.

func setObject(o store.SetObject) api.SetObject {
	return api.SetObject{Set: o.Set, Kind: o.Kind, Name: o.Name, ID: o.ID}
}

func (s *Server) showSet(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	objs, err := s.e.SetObjects(s.ctx(r), c, r.PathValue("name"))
	if err != nil {
		return err
	}
	out := api.Set{Name: r.PathValue("name"), Objects: []api.SetObject{}}
	for _, o := range objs {
		out.Objects = append(out.Objects, setObject(o))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"set": out})
	return nil
}

func (s *Server) claimObject(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "object")
	if err != nil {
		return err
	}
	name, err := nameField(body, "name")
	if err != nil {
		return err
	}
	if name == nil || *name == "" {
		return engine.BadRequest("object.name is required: the name the definition set gives the object.")
	}
	id, err := s.e.ClaimObject(s.ctx(r), c, r.PathValue("name"), r.PathValue("kind"), *name, r.PathValue("id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"object": api.SetObject{Set: r.PathValue("name"), Kind: r.PathValue("kind"), Name: *name, ID: id}})
	return nil
}

func (s *Server) releaseObject(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	if err := s.e.ReleaseObject(s.ctx(r), c, r.PathValue("name"), r.PathValue("kind"), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) showOwner(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	o, err := s.e.OwnerOf(s.ctx(r), c, r.PathValue("kind"), r.PathValue("id"))
	if err != nil {
		return err
	}
	if o == nil {
		return &engine.Error{Status: http.StatusNotFound, Type: "ResourceNotFound", Message: "No definition set owns " + r.PathValue("kind") + " " + r.PathValue("id") + "."}
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"owner": setObject(*o)})
	return nil
}
