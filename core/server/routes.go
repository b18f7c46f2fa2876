package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/host"
	"github.com/grovehq/grove/plugins/sdk"
)

func (s *Server) routes() {
	s.handle("GET /{$}", s.versions)
	s.handle("GET /v1/{$}", s.version)
	s.handle("GET /v1/build-info", s.buildInfo)
	s.handle("GET /v1/profile-types", s.listTypes("profile"))
	s.handle("GET /v1/profile-types/{type}", s.showType("profile"))
	s.handle("GET /v1/profile-types/{type}/hosts", s.listHosts)
	s.handle("GET /v1/policy-types", s.listTypes("policy"))
	s.handle("GET /v1/policy-types/{type}", s.showType("policy"))
	s.handle("GET /v1/plugins", s.listPlugins)
	s.handle("GET /v1/plugins/{name}", s.showPlugin)

	s.handle("GET /v1/profiles", s.listProfiles)
	s.handle("POST /v1/profiles", s.createProfile)
	s.handle("POST /v1/profiles/validate", s.validateProfile)
	s.handle("GET /v1/profiles/{id}", s.showProfile)
	s.handle("PATCH /v1/profiles/{id}", s.updateProfile)
	s.handle("DELETE /v1/profiles/{id}", s.deleteProfile)

	s.handle("GET /v1/policies", s.listPolicies)
	s.handle("POST /v1/policies", s.createPolicy)
	s.handle("POST /v1/policies/validate", s.validatePolicy)
	s.handle("GET /v1/policies/{id}", s.showPolicy)
	s.handle("PATCH /v1/policies/{id}", s.updatePolicy)
	s.handle("DELETE /v1/policies/{id}", s.deletePolicy)

	s.handle("GET /v1/clusters", s.listClusters)
	s.handle("POST /v1/clusters", s.createCluster)
	s.handle("GET /v1/clusters/{id}", s.showCluster)
	s.handle("PATCH /v1/clusters/{id}", s.updateCluster)
	s.handle("DELETE /v1/clusters/{id}", s.deleteCluster)
	s.handle("POST /v1/clusters/{id}/actions", s.clusterAction)
	s.handle("GET /v1/clusters/{id}/policies", s.listBindings)
	s.handle("GET /v1/clusters/{id}/policies/{policy}", s.showBinding)

	s.handle("GET /v1/nodes", s.listNodes)
	s.handle("POST /v1/nodes", s.createNode)
	s.handle("GET /v1/nodes/{id}", s.showNode)
	s.handle("PATCH /v1/nodes/{id}", s.updateNode)
	s.handle("DELETE /v1/nodes/{id}", s.deleteNode)
	s.handle("POST /v1/nodes/{id}/actions", s.nodeAction)

	s.handle("GET /v1/actions", s.listActions)
	s.handle("GET /v1/actions/{id}", s.showAction)
	s.handle("PATCH /v1/actions/{id}", s.updateAction)

	s.handle("GET /v1/sets/{name}", s.showSet)
	s.handle("PUT /v1/sets/{name}/objects/{kind}/{id}", s.claimObject)
	s.handle("DELETE /v1/sets/{name}/objects/{kind}/{id}", s.releaseObject)
	s.handle("GET /v1/owners/{kind}/{id}", s.showOwner)

	s.handle("GET /v1/events", s.listEvents)
	s.handle("GET /v1/events/{id}", s.showEvent)
}

func versionDoc() map[string]any {
	return map[string]any{"id": "1.0", "status": "CURRENT", "min_version": MinVersion, "max_version": MaxVersion, "updated": "2016-01-18T00:00:00Z",
		"links":       []any{map[string]any{"href": "/v1/", "rel": "self"}},
		"media-types": []any{map[string]any{"base": "application/json", "type": "application/vnd.openstack.clustering-v1+json"}}}
}

func (s *Server) versions(w http.ResponseWriter, _ *http.Request, _ engine.Caller) error {
	s.writeJSON(w, http.StatusMultipleChoices, map[string]any{"versions": []any{versionDoc()}})
	return nil
}

func (s *Server) version(w http.ResponseWriter, _ *http.Request, _ engine.Caller) error {
	s.writeJSON(w, http.StatusOK, map[string]any{"version": versionDoc()})
	return nil
}

func (s *Server) buildInfo(w http.ResponseWriter, _ *http.Request, _ engine.Caller) error {
	v := s.opts.Version
	if v == "" {
		v = "dev"
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"build_info": map[string]any{"api": map[string]any{"revision": "1.0"}, "engine": map[string]any{"revision": v}}})
	return nil
}

func support(versions []string) map[string][]api.SupportStatus {
	out := map[string][]api.SupportStatus{}
	for _, v := range versions {
		out[v] = []api.SupportStatus{{Status: "SUPPORTED", Since: "2026.11"}}
	}
	return out
}

func (s *Server) listTypes(kind string) handler {
	return func(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
		var out []api.TypeSummary
		for _, c := range s.opts.Host.Components(kind) {
			for _, v := range c.Versions {
				out = append(out, api.TypeSummary{Name: c.Type, Version: v, SupportStatus: support([]string{v})})
			}
		}
		if out == nil {
			out = []api.TypeSummary{}
		}
		s.writeJSON(w, http.StatusOK, map[string]any{kind + "_types": out})
		return nil
	}
}

// findType resolves a type name as the API spells it, "TYPE" or
// "TYPE-VERSION", to the component serving it.
func (s *Server) findType(kind, name string) (*host.Component, error) {
	typ, version, _ := strings.Cut(name, "-")
	c, ok := s.opts.Host.Component(kind, typ)
	if !ok || (version != "" && !contains(c.Versions, version)) {
		return nil, &engine.Error{Status: http.StatusNotFound, Type: "ResourceNotFound", Message: "The " + kind + "_type '" + name + "' could not be found."}
	}
	return c, nil
}

func (s *Server) showType(kind string) handler {
	return func(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
		name := r.PathValue("type")
		c, err := s.findType(kind, name)
		if err != nil {
			return err
		}
		schema := map[string]any{}
		for k, p := range c.Schema {
			schema[k] = p
		}
		s.writeJSON(w, http.StatusOK, map[string]any{kind + "_type": api.TypeDetail{Name: name, Schema: schema, SupportStatus: support(c.Versions),
			Description: c.Description, Plugin: c.Plugin}})
		return nil
	}
}

// listHosts asks a profile type's driver where it can place nodes.
func (s *Server) listHosts(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	c, err := s.findType("profile", r.PathValue("type"))
	if err != nil {
		return err
	}
	typ := c.Type
	var hosts []sdk.Host
	err = s.opts.Host.Call(r.Context(), "profile", typ, func(ctx context.Context, client *sdk.Client) (err error) {
		hosts, err = client.Hosts(ctx, typ)
		if status.Code(err) == codes.Unimplemented {
			hosts, err = nil, nil // a driver without hosts places nodes nowhere in particular
		}
		return err
	})
	if errors.Is(err, host.ErrUnavailable) {
		return fmt.Errorf("The hosts of %s cannot be listed now: %w.", typ, err)
	}
	if err != nil {
		return &engine.Error{Status: http.StatusBadGateway, Type: "PluginError", Message: fmt.Sprintf("Listing the hosts of %s failed: %v.", typ, err)}
	}
	out := make([]api.Host, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, api.Host{Name: h.Name, Attributes: h.Attributes, Load: h.Load, Error: h.Err})
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"hosts": out})
	return nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func pluginStatus(st host.Status) api.PluginStatus {
	out := api.PluginStatus{Name: st.Name, Command: st.Command, State: st.State, PID: st.PID, Restarts: st.Restarts,
		LastError: st.LastError, Components: st.Components, APIVersions: st.APIVersions}
	if !st.StartedAt.IsZero() {
		out.StartedAt = *ts(st.StartedAt)
	}
	return out
}

func (s *Server) listPlugins(w http.ResponseWriter, _ *http.Request, _ engine.Caller) error {
	out := []api.PluginStatus{}
	for _, st := range s.opts.Host.Statuses() {
		out = append(out, pluginStatus(st))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"plugins": out})
	return nil
}

func (s *Server) showPlugin(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	name := r.PathValue("name")
	for _, st := range s.opts.Host.Statuses() {
		if st.Name != name {
			continue
		}
		out := pluginStatus(st)
		for _, c := range s.opts.Host.PluginComponents(name) {
			schema := map[string]any{}
			for k, p := range c.Schema {
				schema[k] = p
			}
			out.Details = append(out.Details, api.PluginComponent{Kind: c.Kind, Type: c.Type, Versions: c.Versions, Description: c.Description, Schema: schema})
		}
		s.writeJSON(w, http.StatusOK, map[string]any{"plugin": out})
		return nil
	}
	return &engine.Error{Status: http.StatusNotFound, Type: "ResourceNotFound", Message: "No plugin named '" + name + "' is known to this agent."}
}

// --- profiles

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
	s.writeJSON(w, http.StatusOK, map[string]any{"profile": toProfile(p)})
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
	if err := only(body, "profile.", "name", "metadata"); err != nil {
		return err
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

// --- policies

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
	s.writeJSON(w, http.StatusOK, map[string]any{"policy": toPolicy(p)})
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
	if err := only(body, "policy.", "name"); err != nil {
		return err
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

// --- clusters

func (s *Server) listClusters(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	o, err := listOpts(r, c, []string{"name", "status"}, []string{"name", "status", "init_at", "created_at", "updated_at"})
	if err != nil {
		return err
	}
	cs, err := s.s.ListClusters(s.ctx(r), o)
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
	cl, err := s.s.FindCluster(s.ctx(r), c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"cluster": s.toCluster(s.ctx(r), cl)})
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

// forceParam reads Senlin's delete "force" from ?force=true or a
// {"force": true} body (microversion 1.8).
func forceParam(r *http.Request) (bool, error) {
	force := r.URL.Query().Get("force") == "true"
	if r.ContentLength > 0 {
		body, err := decode(r, "")
		if err != nil {
			return false, err
		}
		b, err := boolean(body, "force")
		if err != nil {
			return false, err
		}
		if b != nil {
			force = *b
		}
	}
	return force, nil
}

// deleted answers an asynchronous delete: 202, Location and no body.
func deleted(w http.ResponseWriter, a *model.Action) error {
	w.Header().Set("Location", "/v1/actions/"+a.ID)
	w.WriteHeader(http.StatusAccepted)
	return nil
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

func (s *Server) clusterAction(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "")
	if err != nil {
		return err
	}
	a, err := s.e.ClusterAction(s.ctx(r), c, r.PathValue("id"), body)
	if err != nil {
		return err
	}
	return s.accepted(w, a, nil)
}

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
	bs, err := s.s.ListBindings(s.ctx(r), cl.ID)
	if err != nil {
		return err
	}
	out := []api.ClusterPolicy{}
	for _, b := range bs {
		v := s.bindingView(r, cl, b)
		if e := q.Get("enabled"); e != "" && (e == "true") != v.Enabled {
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

// --- nodes

func (s *Server) listNodes(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	o, err := listOpts(r, c, []string{"cluster_id", "name", "status"}, []string{"index", "name", "status", "init_at", "created_at", "updated_at"})
	if err != nil {
		return err
	}
	if ids := o.Filters["cluster_id"]; len(ids) > 0 {
		for i, ident := range ids {
			cl, err := s.s.FindCluster(s.ctx(r), c.Project, ident)
			if err != nil {
				return err
			}
			ids[i] = cl.ID
		}
	}
	ns, err := s.s.ListNodes(s.ctx(r), o)
	if err != nil {
		return err
	}
	names := map[string]string{}
	out := make([]api.Node, 0, len(ns))
	for _, n := range ns {
		out = append(out, s.toNode(s.ctx(r), n, names))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"nodes": out})
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
	n, err := s.s.FindNode(s.ctx(r), c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"node": s.toNode(s.ctx(r), n, map[string]string{})})
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

// --- actions and events

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

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	o, err := listOpts(r, c, []string{"oid", "oname", "otype", "cluster_id", "action", "level"},
		[]string{"timestamp", "level", "otype", "oname", "action", "status", "oid", "cluster_id"})
	if err != nil {
		return err
	}
	if lv := o.Filters["level"]; len(lv) > 0 {
		for i, l := range lv {
			switch strings.ToUpper(l) {
			case "DEBUG":
				lv[i] = "10"
			case "INFO":
				lv[i] = "20"
			case "WARNING", "WARN":
				lv[i] = "30"
			case "ERROR":
				lv[i] = "40"
			case "CRITICAL":
				lv[i] = "50"
			}
		}
	}
	evs, err := s.s.ListEvents(s.ctx(r), o)
	if err != nil {
		return err
	}
	out := make([]api.Event, 0, len(evs))
	for _, e := range evs {
		out = append(out, toEvent(e))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"events": out})
	return nil
}

func (s *Server) showEvent(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	e, err := s.s.GetEvent(s.ctx(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	if e.Project != c.Project && !c.Admin {
		return &store.NotFoundError{Kind: "event", Ident: e.ID}
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"event": toEvent(e)})
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// --- definition sets (Grove's own, for `grove apply`)

func setObject(o store.SetObject) api.SetObject {
	return api.SetObject{Set: o.Set, Kind: o.Kind, Name: o.Name, ID: o.ID}
}

func (s *Server) showSet(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	objs, err := s.e.SetObjects(s.ctx(r), r.PathValue("name"))
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
	if err := s.e.ClaimObject(s.ctx(r), c, r.PathValue("name"), r.PathValue("kind"), *name, r.PathValue("id")); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"object": api.SetObject{Set: r.PathValue("name"), Kind: r.PathValue("kind"), Name: *name, ID: r.PathValue("id")}})
	return nil
}

func (s *Server) releaseObject(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	if err := s.e.ReleaseObject(s.ctx(r), r.PathValue("name"), r.PathValue("kind"), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) showOwner(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	o, err := s.e.OwnerOf(s.ctx(r), r.PathValue("kind"), r.PathValue("id"))
	if err != nil {
		return err
	}
	if o == nil {
		return &engine.Error{Status: http.StatusNotFound, Type: "ResourceNotFound", Message: "No definition set owns " + r.PathValue("kind") + " " + r.PathValue("id") + "."}
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"owner": setObject(*o)})
	return nil
}
