package api

import (
	"context"
	"net/http"
	"net/url"
)

// DependencyGroup is one named dependency group as declared
// (docs/dependencies.md). On a cluster's own dependencies, Members are what
// it waits on: cluster names or ids, "milestone:NAME" or "path:/...". On a
// dependent, Members are the clusters that wait on the declaring one.
type DependencyGroup struct {
	Name string `json:"name"`
	// Grouping is require_all, require_any, optional_all or exclude_all.
	Grouping string `json:"grouping"`
	// RestartOn is none, error, restart or refresh.
	RestartOn string   `json:"restart_on"`
	Members   []string `json:"members"`
}

// HeldGroup is a dependency group a cluster holds, with who declared it
// and how it evaluates now.
type HeldGroup struct {
	DependencyGroup
	// DeclaredBy names the cluster that declared the group: the holder
	// itself, or another cluster that declared it as a dependent.
	DeclaredBy string `json:"declared_by"`
	// Result is satisfied, unsatisfied or unsatisfiable.
	Result string `json:"result"`
	// Reason names what holds the group back, when it is not satisfied.
	Reason string `json:"reason,omitempty"`
}

// RequiredBy is a group of another cluster naming this one.
type RequiredBy struct {
	Cluster   string `json:"cluster"`
	Group     string `json:"group"`
	Grouping  string `json:"grouping"`
	RestartOn string `json:"restart_on"`
}

// ClusterDependencies is GET /v1/clusters/{id}/dependencies: both sides of
// a cluster's dependencies and whether they let it start.
type ClusterDependencies struct {
	ClusterID   string `json:"cluster_id"`
	ClusterName string `json:"cluster_name"`
	// State is the cluster's state in the dependency graph: running,
	// offline, uninitialized, stopped or maintenance.
	State string `json:"state"`
	// Result is satisfied, unsatisfied or unsatisfiable over every group.
	Result string `json:"result"`
	// Reason says what holds the cluster back ("waiting on db:
	// maintenance", "dependency cycle: a → b → a"), empty when nothing does.
	Reason string `json:"reason,omitempty"`
	// Groups are the groups the cluster holds, its own and those other
	// clusters declared on it as dependents.
	Groups []HeldGroup `json:"groups"`
	// Dependents are the dependents this cluster declared: each is held by
	// its members.
	Dependents []DependencyGroup `json:"dependents"`
	// RequiredBy are the groups of other clusters that name this one.
	RequiredBy []RequiredBy `json:"required_by"`
}

// DependenciesPut is the body of PUT /v1/clusters/{id}/dependencies: it
// replaces everything the cluster declared, its groups and its dependents.
type DependenciesPut struct {
	Groups     []DependencyGroup `json:"groups"`
	Dependents []DependencyGroup `json:"dependents"`
}

// GetDependencies returns both sides of a cluster's dependencies.
func (c *Client) GetDependencies(ctx context.Context, cluster string) (*ClusterDependencies, error) {
	var out struct {
		Dependencies ClusterDependencies `json:"dependencies"`
	}
	if _, err := c.Do(ctx, http.MethodGet, "/v1/clusters/"+url.PathEscape(cluster)+"/dependencies", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out.Dependencies, nil
}

// PutDependencies replaces what a cluster declared; a declaration that
// would close a cycle is refused, naming it.
func (c *Client) PutDependencies(ctx context.Context, cluster string, req DependenciesPut) (*ClusterDependencies, error) {
	var out struct {
		Dependencies ClusterDependencies `json:"dependencies"`
	}
	if req.Groups == nil {
		req.Groups = []DependencyGroup{}
	}
	if req.Dependents == nil {
		req.Dependents = []DependencyGroup{}
	}
	if _, err := c.Do(ctx, http.MethodPut, "/v1/clusters/"+url.PathEscape(cluster)+"/dependencies", nil,
		map[string]any{"dependencies": req}, &out); err != nil {
		return nil, err
	}
	return &out.Dependencies, nil
}

// Milestone is a named set of clusters (SMF's milestones).
type Milestone struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Clusters are the clusters' names (or the references given for
	// clusters that do not exist).
	Clusters  []string `json:"clusters"`
	User      string   `json:"user"`
	Project   string   `json:"project"`
	Domain    string   `json:"domain"`
	CreatedAt *string  `json:"created_at"`
	UpdatedAt *string  `json:"updated_at"`
}

// MilestoneCreate is the body of POST /v1/milestones and of PATCH (where
// an empty Name keeps the name and nil Clusters, sent as null, keep the
// clusters).
type MilestoneCreate struct {
	Name     string   `json:"name,omitempty"`
	Clusters []string `json:"clusters"`
}

// CreateMilestone creates a milestone.
func (c *Client) CreateMilestone(ctx context.Context, req MilestoneCreate) (*Milestone, error) {
	var out struct {
		Milestone Milestone `json:"milestone"`
	}
	if _, err := c.Do(ctx, http.MethodPost, "/v1/milestones", nil, map[string]any{"milestone": req}, &out); err != nil {
		return nil, err
	}
	return &out.Milestone, nil
}

// GetMilestone returns a milestone by id, name or short id.
func (c *Client) GetMilestone(ctx context.Context, ident string) (*Milestone, error) {
	var out struct {
		Milestone Milestone `json:"milestone"`
	}
	if _, err := c.Do(ctx, http.MethodGet, "/v1/milestones/"+url.PathEscape(ident), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out.Milestone, nil
}

// ListMilestones lists the project's milestones by name.
func (c *Client) ListMilestones(ctx context.Context) ([]Milestone, error) {
	var out struct {
		Milestones []Milestone `json:"milestones"`
	}
	if _, err := c.Do(ctx, http.MethodGet, "/v1/milestones", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Milestones, nil
}

// UpdateMilestone renames a milestone or replaces its clusters.
func (c *Client) UpdateMilestone(ctx context.Context, ident string, req MilestoneCreate) (*Milestone, error) {
	var out struct {
		Milestone Milestone `json:"milestone"`
	}
	if _, err := c.Do(ctx, http.MethodPatch, "/v1/milestones/"+url.PathEscape(ident), nil, map[string]any{"milestone": req}, &out); err != nil {
		return nil, err
	}
	return &out.Milestone, nil
}

// DeleteMilestone deletes a milestone.
func (c *Client) DeleteMilestone(ctx context.Context, ident string) error {
	_, err := c.Do(ctx, http.MethodDelete, "/v1/milestones/"+url.PathEscape(ident), nil, nil, nil)
	return err
}
