package server

import (
	"net/http"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
)

// listOperations answers GET /v1/profile-types/{type}/ops in Senlin's
// shape: {"operations": {NAME: {"description", "parameters"}}}.
func (s *Server) listOperations(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	c, err := s.findType("profile", r.PathValue("type"))
	if err != nil {
		return err
	}
	ops, err := s.e.ProfileOperations(c.Type)
	if err != nil {
		return err
	}
	out := map[string]api.Operation{}
	for _, op := range ops {
		params := map[string]any{}
		for k, p := range op.Parameters {
			params[k] = p
		}
		out[op.Name] = api.Operation{Description: op.Description, Parameters: params}
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"operations": out})
	return nil
}

// nodeOperation answers POST /v1/nodes/{id}/ops, {"NAME": {params}}.
func (s *Server) nodeOperation(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "")
	if err != nil {
		return err
	}
	a, err := s.e.NodeOperation(s.ctx(r), c, r.PathValue("id"), body)
	if err != nil {
		return err
	}
	return s.accepted(w, a, nil)
}

// clusterOperation answers POST /v1/clusters/{id}/ops,
// {"NAME": {"filters": {...}, "params": {...}}}.
func (s *Server) clusterOperation(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "")
	if err != nil {
		return err
	}
	a, err := s.e.ClusterOperation(s.ctx(r), c, r.PathValue("id"), body)
	if err != nil {
		return err
	}
	return s.accepted(w, a, nil)
}
