package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/grovehq/grove/core/model"
)

const dependencyCols = "cluster_id, name, group_kind, restart_on, members, declared_by, created_at"

func listJSON(v []string) string {
	if v == nil {
		v = []string{}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func fromListJSON(s string) []string {
	out := []string{}
	_ = json.Unmarshal([]byte(s), &out)
	return out
}

func scanDependency(r scanner) (model.DependencyGroup, error) {
	var g model.DependencyGroup
	var members string
	var created int64
	if err := r.Scan(&g.ClusterID, &g.Name, &g.Grouping, &g.RestartOn, &members, &g.DeclaredBy, &created); err != nil {
		return g, err
	}
	g.Members, g.CreatedAt = fromListJSON(members), fromUS(created)
	return g, nil
}

// ReplaceDeclaredDependencies implements Store.
func (s *SQL) ReplaceDeclaredDependencies(ctx context.Context, declarer string, groups []model.DependencyGroup) error {
	return s.InTx(ctx, func(tx Store) error {
		t := tx.(*SQL)
		if _, err := t.exec(ctx, "DELETE FROM cluster_dependencies WHERE declared_by = ?", declarer); err != nil {
			return fmt.Errorf("replace the dependencies declared by %s: %w", declarer, err)
		}
		for _, g := range groups {
			if g.DeclaredBy != declarer {
				return fmt.Errorf("dependency group %s on %s is declared by %s, not %s", g.Name, g.ClusterID, g.DeclaredBy, declarer)
			}
			var other string
			err := t.queryRow(ctx, "SELECT declared_by FROM cluster_dependencies WHERE cluster_id = ? AND name = ?", g.ClusterID, g.Name).Scan(&other)
			if err == nil {
				return fmt.Errorf("Cluster %s already holds a dependency group named %q, declared by cluster %s: %w", g.ClusterID, g.Name, other, ErrDuplicate)
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("replace the dependencies declared by %s: %w", declarer, err)
			}
			if _, err := t.exec(ctx, "INSERT INTO cluster_dependencies ("+dependencyCols+") VALUES ("+placeholders(7)+")",
				g.ClusterID, g.Name, g.Grouping, g.RestartOn, listJSON(g.Members), g.DeclaredBy, us(g.CreatedAt)); err != nil {
				return fmt.Errorf("store dependency group %s of %s: %w", g.Name, g.ClusterID, err)
			}
		}
		return nil
	})
}

// ListDependencies implements Store.
func (s *SQL) ListDependencies(ctx context.Context) ([]model.DependencyGroup, error) {
	rows, err := s.query(ctx, "SELECT "+dependencyCols+" FROM cluster_dependencies ORDER BY cluster_id, name")
	if err != nil {
		return nil, fmt.Errorf("list dependencies: %w", err)
	}
	defer rows.Close()
	var out []model.DependencyGroup
	for rows.Next() {
		g, err := scanDependency(rows)
		if err != nil {
			return nil, fmt.Errorf("list dependencies: %w", err)
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

const milestoneCols = "id, name, clusters, usr, project, domain, created_at, updated_at"

func scanMilestone(r scanner) (*model.Milestone, error) {
	m := &model.Milestone{}
	var clusters string
	var created int64
	var updated sql.NullInt64
	if err := r.Scan(&m.ID, &m.Name, &clusters, &m.User, &m.Project, &m.Domain, &created, &updated); err != nil {
		return nil, err
	}
	m.Clusters, m.CreatedAt, m.UpdatedAt = fromListJSON(clusters), fromUS(created), fromUSPtr(updated)
	return m, nil
}

// CreateMilestone implements Store.
func (s *SQL) CreateMilestone(ctx context.Context, m *model.Milestone) error {
	_, err := s.exec(ctx, "INSERT INTO milestones ("+milestoneCols+") VALUES ("+placeholders(8)+")",
		m.ID, m.Name, listJSON(m.Clusters), m.User, m.Project, m.Domain, us(m.CreatedAt), usPtr(m.UpdatedAt))
	if s.unique(err) {
		return &DuplicateError{Kind: "milestone", Name: m.Name}
	}
	if err != nil {
		return fmt.Errorf("create milestone %s: %w", m.Name, err)
	}
	return nil
}

// GetMilestone implements Store.
func (s *SQL) GetMilestone(ctx context.Context, id string) (*model.Milestone, error) {
	return getOne(ctx, s, "milestone", "SELECT "+milestoneCols+" FROM milestones WHERE id = ?", scanMilestone, id)
}

// FindMilestone implements Store.
func (s *SQL) FindMilestone(ctx context.Context, project, ident string) (m *model.Milestone, err error) {
	err = s.find(ctx, "milestone", "milestones", project, ident, func(id string) error { m, err = s.GetMilestone(ctx, id); return err })
	return m, err
}

// ListMilestones implements Store; by name unless a sort is given.
func (s *SQL) ListMilestones(ctx context.Context, o ListOpts) ([]*model.Milestone, error) {
	var out []*model.Milestone
	err := s.list(ctx, "milestones", milestoneCols, o, []string{"name"}, func(r scanner) (string, error) {
		m, err := scanMilestone(r)
		if err != nil {
			return "", err
		}
		out = append(out, m)
		return m.ID, nil
	})
	return out, err
}

// UpdateMilestone implements Store: the name and the clusters change.
func (s *SQL) UpdateMilestone(ctx context.Context, m *model.Milestone) error {
	res, err := s.exec(ctx, "UPDATE milestones SET name = ?, clusters = ?, updated_at = ? WHERE id = ?",
		m.Name, listJSON(m.Clusters), usPtr(m.UpdatedAt), m.ID)
	if s.unique(err) {
		return &DuplicateError{Kind: "milestone", Name: m.Name}
	}
	if err != nil {
		return fmt.Errorf("update milestone %s: %w", m.Name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return &NotFoundError{Kind: "milestone", Ident: m.ID}
	}
	return nil
}

// DeleteMilestone implements Store.
func (s *SQL) DeleteMilestone(ctx context.Context, id string) error {
	res, err := s.exec(ctx, "DELETE FROM milestones WHERE id = ?", id)
	if err != nil {
		return fmt.Errorf("delete milestone %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return &NotFoundError{Kind: "milestone", Ident: id}
	}
	return nil
}
