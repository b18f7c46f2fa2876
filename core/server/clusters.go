package server

import (
	"net/http"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
)

func (s *Server) listClusters(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	o, err := listOpts(r, c, []string{"name", "status"}, []string{"name", "status", "init_at", "created_at", "updated_at"})
	if err != nil {
		return err
	}
	cs, err := s.r.ListClusters(s.ctx(r), o)
	if err != nil {
		return err
	}
	out := make([]api.Cluster, 0, len(cs))
	for _, cl := range cs {
		out = append(out, s.toCluster(s.ctx(r), cl))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"clusters": out})
	return nil
}

func (s *Server) createCluster(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "cluster")
	if err != nil {
		return err
	}
	if err := only(body, "cluster.", "name", "profile_id", "desired_capacity", "min_size", "max_size", "timeout", "metadata", "config"); err != nil {
		return err
	}
	var req engine.ClusterCreate
	name, err := nameField(body, "name")
	if err != nil {
		return err
	}
	profile, err := nameField(body, "profile_id")
	if err != nil {
		return err
	}
	req.Name, req.Profile = deref(name), deref(profile)
	if err := sizes(body, &req.DesiredCapacity, &req.MinSize, &req.MaxSize, &req.Timeout); err != nil {
		return err
	}
	if req.Metadata, err = metadata(body, "metadata"); err != nil {
		return err
	}
	if req.Config, err = object(body, "config"); err != nil {
		return err
	}
	cl, a, err := s.e.CreateCluster(s.ctx(r), c, req)
	if err != nil {
		return err
	}
	return s.accepted(w, a, map[string]any{"cluster": s.toCluster(s.ctx(r), cl)})
}

// sizes reads a cluster's size fields and timeout, each checked against
// its range before it becomes an int.
func sizes(body map[string]any, desired, min, max, timeout **int) error {
	var err error
	if *desired, err = integer(body, "desired_capacity", 0, engine.MaxCount); err != nil {
		return err
	}
	if *min, err = integer(body, "min_size", 0, engine.MaxCount); err != nil {
		return err
	}
	if *max, err = integer(body, "max_size", -1, engine.MaxCount); err != nil {
		return err
	}
	*timeout, err = integer(body, "timeout", 0, engine.MaxTimeout)
	return err
}

func (s *Server) showCluster(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	cl, err := s.r.FindCluster(s.ctx(r), c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := s.toCluster(s.ctx(r), cl)
	inst, err := s.e.ClusterInstances(s.ctx(r), cl)
	if err != nil {
		return err
	}
	for _, x := range inst {
		out.Instances = append(out.Instances, api.ClusterInstance{Host: x.Host, Status: x.Status, State: x.State, Flags: x.Flags,
			Frozen: x.Frozen, Since: ts(x.Since), Reason: x.Reason})
	}
	x, err := s.e.ClusterExpectation(s.ctx(r), cl)
	if err != nil {
		return err
	}
	if x != nil {
		out.Expect = &api.ClusterExpect{Kind: x.Kind, Host: x.Host, Since: ts(x.Since), Action: x.ActionID, Result: x.Reason}
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"cluster": out})
	return nil
}

func (s *Server) updateCluster(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "cluster")
	if err != nil {
		return err
	}
	if err := only(body, "cluster.", "name", "profile_id", "profile_only", "metadata", "timeout", "config", "desired_capacity", "min_size", "max_size"); err != nil {
		return err
	}
	var req engine.ClusterUpdate
	if req.Name, err = nameField(body, "name"); err != nil {
		return err
	}
	if req.Profile, err = nameField(body, "profile_id"); err != nil {
		return err
	}
	po, err := boolean(body, "profile_only")
	if err != nil {
		return err
	}
	req.ProfileOnly = po != nil && *po
	if req.Metadata, err = metadata(body, "metadata"); err != nil {
		return err
	}
	if req.Config, err = object(body, "config"); err != nil {
		return err
	}
	if err := sizes(body, &req.DesiredCapacity, &req.MinSize, &req.MaxSize, &req.Timeout); err != nil {
		return err
	}
	cl, a, err := s.e.UpdateCluster(s.ctx(r), c, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return s.accepted(w, a, map[string]any{"cluster": s.toCluster(s.ctx(r), cl)})
}

func (s *Server) deleteCluster(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	force, err := forceParam(r)
	if err != nil {
		return err
	}
	a, err := s.e.DeleteCluster(s.ctx(r), c, r.PathValue("id"), force)
	if err != nil {
		return err
	}
	return deleted(w, a)
}
