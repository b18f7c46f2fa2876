package server

import (
	"net/http"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

func (s *Server) listNodes(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	o, err := listOpts(r, c, []string{"cluster_id", "name", "status"}, []string{"index", "name", "status", "init_at", "created_at", "updated_at"})
	if err != nil {
		return err
	}
	if ids := o.Filters["cluster_id"]; len(ids) > 0 {
		for i, ident := range ids {
			cl, err := s.r.FindCluster(s.ctx(r), c.Project, ident)
			if err != nil {
				return err
			}
			ids[i] = cl.ID
		}
	}
	ns, err := s.r.ListNodeViews(s.ctx(r), o)
	if err != nil {
		return err
	}
	s.writeNodes(s.ctx(r), w, "nodes", true, ns)
	return nil
}

func (s *Server) createNode(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "node")
	if err != nil {
		return err
	}
	if err := only(body, "node.", "name", "profile_id", "cluster_id", "role", "metadata"); err != nil {
		return err
	}
	var req engine.NodeCreate
	for k, dst := range map[string]*string{"name": &req.Name, "profile_id": &req.Profile, "cluster_id": &req.Cluster, "role": &req.Role} {
		v, err := nameField(body, k)
		if err != nil {
			return err
		}
		*dst = deref(v)
	}
	if req.Metadata, err = metadata(body, "metadata"); err != nil {
		return err
	}
	n, a, err := s.e.CreateNode(s.ctx(r), c, req)
	if err != nil {
		return err
	}
	return s.accepted(w, a, map[string]any{"node": s.toNode(s.ctx(r), n, map[string]string{})})
}

func (s *Server) showNode(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	n, err := s.r.FindNodeView(s.ctx(r), c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	s.writeNodes(s.ctx(r), w, "node", false, []*model.NodeView{n})
	return nil
}

func (s *Server) updateNode(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "node")
	if err != nil {
		return err
	}
	if err := only(body, "node.", "name", "profile_id", "role", "metadata", "tainted"); err != nil {
		return err
	}
	var req engine.NodeUpdate
	if req.Name, err = nameField(body, "name"); err != nil {
		return err
	}
	if req.Profile, err = nameField(body, "profile_id"); err != nil {
		return err
	}
	if req.Role, err = nameField(body, "role"); err != nil {
		return err
	}
	if req.Metadata, err = metadata(body, "metadata"); err != nil {
		return err
	}
	if req.Tainted, err = boolean(body, "tainted"); err != nil {
		return err
	}
	n, a, err := s.e.UpdateNode(s.ctx(r), c, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return s.accepted(w, a, map[string]any{"node": s.toNode(s.ctx(r), n, map[string]string{})})
}

func (s *Server) deleteNode(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	force, err := forceParam(r)
	if err != nil {
		return err
	}
	a, err := s.e.DeleteNode(s.ctx(r), c, r.PathValue("id"), force)
	if err != nil {
		return err
	}
	return deleted(w, a)
}

func (s *Server) nodeAction(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "")
	if err != nil {
		return err
	}
	a, err := s.e.NodeAction(s.ctx(r), c, r.PathValue("id"), body)
	if err != nil {
		return err
	}
	return s.accepted(w, a, nil)
}

// adoptRequest reads Senlin's adopt and adopt-preview body (no envelope).
func adoptRequest(r *http.Request, preview bool) (engine.NodeAdopt, error) {
	var req engine.NodeAdopt
	body, err := decode(r, "")
	if err != nil {
		return req, err
	}
	allowed := []string{"identity", "type", "overrides", "snapshot"}
	if !preview {
		allowed = append(allowed, "name", "role", "metadata")
	}
	if err := only(body, "", allowed...); err != nil {
		return req, err
	}
	for k, dst := range map[string]*string{"identity": &req.Identity, "type": &req.Type, "name": &req.Name, "role": &req.Role} {
		v, err := nameField(body, k)
		if err != nil {
			return req, err
		}
		if v != nil {
			*dst = *v
		}
	}
	if req.Overrides, err = object(body, "overrides"); err != nil {
		return req, err
	}
	if req.Metadata, err = metadata(body, "metadata"); err != nil {
		return req, err
	}
	snap, err := boolean(body, "snapshot")
	if err != nil {
		return req, err
	}
	req.Snapshot = snap != nil && *snap
	return req, nil
}

// adoptNode is POST /v1/nodes/adopt (microversion 1.7): 200 with the node,
// ACTIVE, as Senlin answers (adoption is not an action).
func (s *Server) adoptNode(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	req, err := adoptRequest(r, false)
	if err != nil {
		return err
	}
	n, err := s.e.AdoptNode(s.ctx(r), c, req)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"node": s.toNode(s.ctx(r), n, map[string]string{})})
	return nil
}

// adoptPreview is POST /v1/nodes/adopt-preview (microversion 1.7): the
// profile spec that would describe the resource, under node_profile as
// Senlin's code answers (its api-ref says node_preview).
func (s *Server) adoptPreview(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	req, err := adoptRequest(r, true)
	if err != nil {
		return err
	}
	p, err := s.e.AdoptPreview(s.ctx(r), c, req)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"node_profile": p})
	return nil
}
