package server

import (
	"net/http"
	"strings"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

func (s *Server) bindingView(r *http.Request, cl *model.Cluster, b *model.Binding) api.ClusterPolicy {
	out := api.ClusterPolicy{ID: b.ID, ClusterID: cl.ID, ClusterName: cl.Name, PolicyID: b.PolicyID, Enabled: b.Enabled, Priority: b.Priority,
		Data: orMap(b.Data), LastOp: tsPtr(b.LastOp)}
	if p, err := s.s.GetPolicy(s.ctx(r), b.PolicyID); err == nil {
		out.PolicyName, out.PolicyType = p.Name, p.FullType()
	}
	return out
}

func (s *Server) listBindings(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	cl, err := s.s.FindCluster(s.ctx(r), c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	for k := range q {
		if !contains([]string{"enabled", "policy_name", "policy_type", "sort"}, k) {
			return engine.BadRequest("Invalid parameter %s", k)
		}
	}
	enabled, err := queryBool(r, "enabled")
	if err != nil {
		return err
	}
	bs, err := s.s.ListBindings(s.ctx(r), cl.ID)
	if err != nil {
		return err
	}
	out := []api.ClusterPolicy{}
	for _, b := range bs {
		v := s.bindingView(r, cl, b)
		if q.Has("enabled") && enabled != v.Enabled {
			continue
		}
		if n := q.Get("policy_name"); n != "" && n != v.PolicyName {
			continue
		}
		if t := q.Get("policy_type"); t != "" && t != v.PolicyType && !strings.HasPrefix(v.PolicyType, t+"-") {
			continue
		}
		out = append(out, v)
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"cluster_policies": out})
	return nil
}

func (s *Server) showBinding(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	cl, err := s.s.FindCluster(s.ctx(r), c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	p, err := s.s.FindPolicy(s.ctx(r), c.Project, r.PathValue("policy"))
	if err != nil {
		return err
	}
	b, err := s.s.GetBinding(s.ctx(r), cl.ID, p.ID)
	if err != nil {
		return &engine.Error{Status: http.StatusNotFound, Type: "PolicyBindingNotFound", Message: "The policy '" + p.Name + "' is not attached to cluster '" + cl.Name + "'."}
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"cluster_policy": s.bindingView(r, cl, b)})
	return nil
}

// clusterPlacement shows where the cluster's next node would go, as its
// grove.policy.placement policy ranks the hosts now.
func (s *Server) clusterPlacement(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	cl, err := s.s.FindCluster(s.ctx(r), c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	if len(r.URL.Query()) > 0 {
		return engine.BadRequest("The placement of a cluster takes no query parameters.")
	}
	d, err := s.e.ClusterPlacement(s.ctx(r), cl)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"cluster": cl.Name, "placement": d})
	return nil
}
