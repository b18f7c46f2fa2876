package model

import "time"

// DependencyGroup is one named dependency group held by a cluster, as an
// SMF dependency property group is held by an instance
// (docs/dependencies.md): the cluster starts only when the group is
// satisfied, and stops when a member's stop reaches it through RestartOn.
// The rules are core/orchestrator/deps's.
type DependencyGroup struct {
	// ClusterID is the cluster that holds the group: the one that waits.
	ClusterID string
	Name      string
	// Grouping is require_all, require_any, optional_all or exclude_all.
	Grouping string
	// RestartOn is none, error, restart or refresh.
	RestartOn string
	// Members are cluster names (the API resolves ids to names; a name
	// survives the cluster's replacement, as an SMF FMRI does),
	// "milestone:NAME" or "path:/absolute/path".
	Members []string
	// DeclaredBy is the cluster that declared the group: ClusterID for its
	// own dependency, another cluster for a dependent it declared on
	// ClusterID (SMF's import of a `dependent`).
	DeclaredBy string
	CreatedAt  time.Time
}

// Dependent reports whether the group was declared by another cluster.
func (g DependencyGroup) Dependent() bool { return g.DeclaredBy != g.ClusterID }

// Milestone is a named set of clusters that only aggregates dependencies
// (SMF's milestones): entering it brings up its clusters and what they
// depend on and stops everything else.
type Milestone struct {
	ID   string
	Name string
	// Clusters are cluster names, as in DependencyGroup.Members.
	Clusters  []string
	User      string
	Project   string
	Domain    string
	CreatedAt time.Time
	UpdatedAt *time.Time
}
