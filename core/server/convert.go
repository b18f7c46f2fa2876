package server

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

func ts(t time.Time) *string {
	s := t.UTC().Format("2006-01-02T15:04:05Z")
	return &s
}

func tsPtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	return ts(*t)
}

func orMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func toProfile(p *model.Profile) api.Profile {
	return api.Profile{ID: p.ID, Name: p.Name, Type: p.FullType(), User: p.User, Project: p.Project, Domain: p.Domain,
		Spec: orMap(engine.Redact(p.Spec)), Metadata: orMap(p.Metadata), CreatedAt: ts(p.CreatedAt), UpdatedAt: tsPtr(p.UpdatedAt)}
}

func toPolicy(p *model.Policy) api.Policy {
	return api.Policy{ID: p.ID, Name: p.Name, Type: p.FullType(), User: p.User, Project: p.Project, Domain: p.Domain,
		Spec: orMap(engine.Redact(p.Spec)), Data: orMap(p.Data), CreatedAt: ts(p.CreatedAt), UpdatedAt: tsPtr(p.UpdatedAt)}
}

// toCluster fills node and policy ids and the profile name from the store.
func (s *Server) toCluster(ctx context.Context, c *model.Cluster) api.Cluster {
	out := api.Cluster{ID: c.ID, Name: c.Name, ProfileID: c.ProfileID, User: c.User, Project: c.Project, Domain: c.Domain,
		InitAt: ts(c.InitAt), CreatedAt: tsPtr(c.CreatedAt), UpdatedAt: tsPtr(c.UpdatedAt), MinSize: c.MinSize, MaxSize: c.MaxSize,
		DesiredCapacity: c.DesiredCapacity, Timeout: c.Timeout, Status: c.Status, StatusReason: c.StatusReason,
		Metadata: orMap(c.Metadata), Data: orMap(c.Data), Dependents: orMap(c.Dependents), Config: orMap(c.Config),
		Nodes: []string{}, Policies: []string{}}
	out.RunState, out.RunReason = model.RunState(c)
	if p, err := s.r.GetProfile(ctx, c.ProfileID); err == nil {
		out.ProfileName = p.Name
	}
	// Ids and counts come from indexes; no node row is decoded, and past
	// MaxInlineIDs the list is a page and a summary (api.IDsSummary).
	if ids, err := s.r.ClusterNodeIDs(ctx, c.ID, api.MaxInlineIDs+1); err == nil {
		if len(ids) > api.MaxInlineIDs {
			ids = ids[:api.MaxInlineIDs]
			if counts, err := s.r.CountNodesByStatus(ctx, c.ID); err == nil {
				sum := &api.IDsSummary{Shown: len(ids), ByStatus: counts,
					Next: "/v1/nodes?" + url.Values{"cluster_id": {c.ID}, "sort": {"index"}, "limit": {strconv.Itoa(api.MaxInlineIDs)}, "marker": {ids[len(ids)-1]}}.Encode()}
				for _, n := range counts {
					sum.Total += n
				}
				out.NodesSummary = sum
			}
		}
		out.Nodes = append(out.Nodes, ids...)
	}
	if bs, err := s.r.ListBindings(ctx, c.ID); err == nil {
		for _, b := range bs {
			out.Policies = append(out.Policies, b.PolicyID)
		}
	}
	return out
}

func (s *Server) toNode(ctx context.Context, n *model.Node, names map[string]string) api.Node {
	out := api.Node{ID: n.ID, Name: n.Name, ClusterID: n.ClusterID, PhysicalID: n.PhysicalID, ProfileID: n.ProfileID, User: n.User,
		Project: n.Project, Domain: n.Domain, Index: n.Index, Role: n.Role, InitAt: ts(n.InitAt), CreatedAt: tsPtr(n.CreatedAt),
		UpdatedAt: tsPtr(n.UpdatedAt), Status: n.Status, StatusReason: n.StatusReason, Data: orMap(n.Data), Metadata: orMap(n.Metadata),
		Dependents: orMap(n.Dependents), Tainted: n.Tainted, Host: n.Host}
	out.ProfileName = s.profileName(ctx, n.ProfileID, names)
	return out
}

// profileName is the name of profile id, looked up once per response:
// names caches it (an empty name for a profile that is gone).
func (s *Server) profileName(ctx context.Context, id string, names map[string]string) string {
	name, ok := names[id]
	if !ok {
		if p, err := s.r.GetProfile(ctx, id); err == nil {
			name = p.Name
		}
		names[id] = name
	}
	return name
}

func toAction(a *model.Action, children []string, parent string) api.Action {
	out := api.Action{ID: a.ID, Name: a.Name, ClusterID: a.ClusterID, Target: a.Target, Action: a.Action, Cause: a.Cause, Interval: -1,
		StartTime: a.StartTime, EndTime: a.EndTime, Timeout: a.Timeout, Status: a.Status, StatusReason: a.StatusReason,
		Inputs: orMap(a.Inputs), Outputs: orMap(a.Outputs), Data: orMap(a.Data), CreatedAt: ts(a.CreatedAt), UpdatedAt: tsPtr(a.UpdatedAt),
		User: a.User, Project: a.Project, DependsOn: children, DependedBy: []string{}}
	if out.DependsOn == nil {
		out.DependsOn = []string{}
	}
	if parent != "" {
		out.DependedBy = []string{parent}
	}
	if a.Owner != "" {
		owner := a.Owner
		out.Owner = &owner
	}
	return out
}

func toEvent(e *model.Event) api.Event {
	return api.Event{ID: e.ID, Timestamp: *ts(e.Timestamp), OID: e.OID, OName: e.OName, OType: e.OType, ClusterID: e.ClusterID,
		User: e.User, Project: e.Project, Action: e.Action, Status: e.Status, StatusReason: e.StatusReason,
		Level: model.LevelName(e.Level), MetaData: orMap(e.MetaData)}
}
