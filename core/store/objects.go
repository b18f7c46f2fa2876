package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/grovehq/grove/core/model"
)

const profileCols = "id, name, type, version, spec, properties, metadata, usr, project, domain, created_at, updated_at"

func scanProfile(r scanner) (*model.Profile, error) {
	p := &model.Profile{}
	var spec, props, meta string
	var created int64
	var updated sql.NullInt64
	if err := r.Scan(&p.ID, &p.Name, &p.Type, &p.Version, &spec, &props, &meta, &p.User, &p.Project, &p.Domain, &created, &updated); err != nil {
		return nil, err
	}
	p.Spec, p.Properties, p.Metadata = fromJSON(spec), fromJSON(props), fromJSON(meta)
	p.CreatedAt, p.UpdatedAt = fromUS(created), fromUSPtr(updated)
	return p, nil
}

func getOne[T any](ctx context.Context, s *SQL, kind, q string, scan func(scanner) (T, error), id string) (T, error) {
	v, err := scan(s.queryRow(ctx, q, id))
	if errors.Is(err, sql.ErrNoRows) {
		return v, &NotFoundError{Kind: kind, Ident: id}
	}
	if err != nil {
		return v, fmt.Errorf("get %s %s: %w", kind, id, err)
	}
	return v, nil
}

// CreateProfile implements Store.
func (s *SQL) CreateProfile(ctx context.Context, p *model.Profile) error {
	_, err := s.exec(ctx, "INSERT INTO profiles ("+profileCols+") VALUES ("+placeholders(12)+")",
		p.ID, p.Name, p.Type, p.Version, toJSON(p.Spec), toJSON(p.Properties), toJSON(p.Metadata), p.User, p.Project, p.Domain, us(p.CreatedAt), usPtr(p.UpdatedAt))
	if err != nil {
		return fmt.Errorf("create profile %s: %w", p.Name, err)
	}
	return nil
}

// GetProfile implements Store.
func (s *SQL) GetProfile(ctx context.Context, id string) (*model.Profile, error) {
	return getOne(ctx, s, "profile", "SELECT "+profileCols+" FROM profiles WHERE id = ?", scanProfile, id)
}

// FindProfile implements Store.
func (s *SQL) FindProfile(ctx context.Context, project, ident string) (p *model.Profile, err error) {
	err = s.find(ctx, "profile", "profiles", project, ident, func(id string) error { p, err = s.GetProfile(ctx, id); return err })
	return p, err
}

// ListProfiles implements Store.
func (s *SQL) ListProfiles(ctx context.Context, o ListOpts) ([]*model.Profile, error) {
	var out []*model.Profile
	err := s.list(ctx, "profiles", profileCols, o, []string{"created_at"}, func(r scanner) (string, error) {
		p, err := scanProfile(r)
		if err != nil {
			return "", err
		}
		out = append(out, p)
		return p.ID, nil
	})
	return out, err
}

// UpdateProfile implements Store.
func (s *SQL) UpdateProfile(ctx context.Context, p *model.Profile) error {
	_, err := s.exec(ctx, "UPDATE profiles SET name = ?, metadata = ?, updated_at = ? WHERE id = ?", p.Name, toJSON(p.Metadata), usPtr(p.UpdatedAt), p.ID)
	return err
}

// DeleteProfile implements Store.
func (s *SQL) DeleteProfile(ctx context.Context, id string) error {
	if err := s.DeleteSetObject(ctx, "profile", id); err != nil {
		return err
	}
	_, err := s.exec(ctx, "DELETE FROM profiles WHERE id = ?", id)
	return err
}

func (s *SQL) exists(ctx context.Context, q string, args ...any) (bool, error) {
	var n int
	if err := s.queryRow(ctx, q, args...).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// ProfileInUse implements Store.
func (s *SQL) ProfileInUse(ctx context.Context, id string) (bool, error) {
	return s.exists(ctx, "SELECT (SELECT COUNT(*) FROM clusters WHERE profile_id = ?) + (SELECT COUNT(*) FROM nodes WHERE profile_id = ?) + "+namedUnderWay,
		id, id, underWayPattern(id))
}

// namedUnderWay counts the top-level actions under way whose inputs name
// an id (underWayPattern): an update moving nodes to a profile, a paused
// update that may roll back to one, an attach of a policy. What they
// write with it comes after they began, so a deletion in between would
// leave nodes or a binding naming an object that is gone. Ids are UUIDs,
// so a quoted id found in the inputs is that object.
const namedUnderWay = "(SELECT COUNT(*) FROM actions WHERE parent_id = '' AND status NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED') AND inputs LIKE ?)"

func underWayPattern(id string) string { return `%"` + id + `"%` }

const policyCols = "id, name, type, version, spec, properties, data, usr, project, domain, created_at, updated_at"

func scanPolicy(r scanner) (*model.Policy, error) {
	p := &model.Policy{}
	var spec, props, data string
	var created int64
	var updated sql.NullInt64
	if err := r.Scan(&p.ID, &p.Name, &p.Type, &p.Version, &spec, &props, &data, &p.User, &p.Project, &p.Domain, &created, &updated); err != nil {
		return nil, err
	}
	p.Spec, p.Properties, p.Data = fromJSON(spec), fromJSON(props), fromJSON(data)
	p.CreatedAt, p.UpdatedAt = fromUS(created), fromUSPtr(updated)
	return p, nil
}

// CreatePolicy implements Store.
func (s *SQL) CreatePolicy(ctx context.Context, p *model.Policy) error {
	_, err := s.exec(ctx, "INSERT INTO policies ("+policyCols+") VALUES ("+placeholders(12)+")",
		p.ID, p.Name, p.Type, p.Version, toJSON(p.Spec), toJSON(p.Properties), toJSON(p.Data), p.User, p.Project, p.Domain, us(p.CreatedAt), usPtr(p.UpdatedAt))
	if err != nil {
		return fmt.Errorf("create policy %s: %w", p.Name, err)
	}
	return nil
}

// GetPolicy implements Store.
func (s *SQL) GetPolicy(ctx context.Context, id string) (*model.Policy, error) {
	return getOne(ctx, s, "policy", "SELECT "+policyCols+" FROM policies WHERE id = ?", scanPolicy, id)
}

// FindPolicy implements Store.
func (s *SQL) FindPolicy(ctx context.Context, project, ident string) (p *model.Policy, err error) {
	err = s.find(ctx, "policy", "policies", project, ident, func(id string) error { p, err = s.GetPolicy(ctx, id); return err })
	return p, err
}

// ListPolicies implements Store.
func (s *SQL) ListPolicies(ctx context.Context, o ListOpts) ([]*model.Policy, error) {
	var out []*model.Policy
	err := s.list(ctx, "policies", policyCols, o, []string{"created_at"}, func(r scanner) (string, error) {
		p, err := scanPolicy(r)
		if err != nil {
			return "", err
		}
		out = append(out, p)
		return p.ID, nil
	})
	return out, err
}

// UpdatePolicy implements Store.
func (s *SQL) UpdatePolicy(ctx context.Context, p *model.Policy) error {
	_, err := s.exec(ctx, "UPDATE policies SET name = ?, data = ?, updated_at = ? WHERE id = ?", p.Name, toJSON(p.Data), usPtr(p.UpdatedAt), p.ID)
	return err
}

// DeletePolicy implements Store.
func (s *SQL) DeletePolicy(ctx context.Context, id string) error {
	if err := s.DeleteSetObject(ctx, "policy", id); err != nil {
		return err
	}
	_, err := s.exec(ctx, "DELETE FROM policies WHERE id = ?", id)
	return err
}

// PolicyInUse implements Store.
func (s *SQL) PolicyInUse(ctx context.Context, id string) (bool, error) {
	return s.exists(ctx, "SELECT (SELECT COUNT(*) FROM bindings WHERE policy_id = ?) + "+namedUnderWay, id, underWayPattern(id))
}

const clusterCols = "id, name, profile_id, usr, project, domain, init_at, created_at, updated_at, min_size, max_size, desired_capacity, next_index, timeout, status, status_reason, metadata, data, config, dependents"

func scanCluster(r scanner) (*model.Cluster, error) {
	c := &model.Cluster{}
	var initAt int64
	var created, updated sql.NullInt64
	var meta, data, config, deps string
	if err := r.Scan(&c.ID, &c.Name, &c.ProfileID, &c.User, &c.Project, &c.Domain, &initAt, &created, &updated,
		&c.MinSize, &c.MaxSize, &c.DesiredCapacity, &c.NextIndex, &c.Timeout, &c.Status, &c.StatusReason, &meta, &data, &config, &deps); err != nil {
		return nil, err
	}
	c.InitAt, c.CreatedAt, c.UpdatedAt = fromUS(initAt), fromUSPtr(created), fromUSPtr(updated)
	c.Metadata, c.Data, c.Config, c.Dependents = fromJSON(meta), fromJSON(data), fromJSON(config), fromJSON(deps)
	return c, nil
}

func clusterArgs(c *model.Cluster) []any {
	return []any{c.ID, c.Name, c.ProfileID, c.User, c.Project, c.Domain, us(c.InitAt), usPtr(c.CreatedAt), usPtr(c.UpdatedAt),
		c.MinSize, c.MaxSize, c.DesiredCapacity, c.NextIndex, c.Timeout, c.Status, c.StatusReason,
		toJSON(c.Metadata), toJSON(c.Data), toJSON(c.Config), toJSON(c.Dependents)}
}

// CreateCluster implements Store.
func (s *SQL) CreateCluster(ctx context.Context, c *model.Cluster) error {
	_, err := s.exec(ctx, "INSERT INTO clusters ("+clusterCols+") VALUES ("+placeholders(20)+")", clusterArgs(c)...)
	if s.unique(err) {
		return &DuplicateError{Kind: "cluster", Name: c.Name}
	}
	if err != nil {
		return fmt.Errorf("create cluster %s: %w", c.Name, err)
	}
	return nil
}

// GetCluster implements Store.
func (s *SQL) GetCluster(ctx context.Context, id string) (*model.Cluster, error) {
	return getOne(ctx, s, "cluster", "SELECT "+clusterCols+" FROM clusters WHERE id = ?", scanCluster, id)
}

// FindCluster implements Store.
func (s *SQL) FindCluster(ctx context.Context, project, ident string) (c *model.Cluster, err error) {
	err = s.find(ctx, "cluster", "clusters", project, ident, func(id string) error { c, err = s.GetCluster(ctx, id); return err })
	return c, err
}

// ListClusters implements Store.
func (s *SQL) ListClusters(ctx context.Context, o ListOpts) ([]*model.Cluster, error) {
	var out []*model.Cluster
	err := s.list(ctx, "clusters", clusterCols, o, []string{"init_at"}, func(r scanner) (string, error) {
		c, err := scanCluster(r)
		if err != nil {
			return "", err
		}
		out = append(out, c)
		return c.ID, nil
	})
	return out, err
}

// UpdateCluster implements Store.
func (s *SQL) UpdateCluster(ctx context.Context, c *model.Cluster) error {
	args := clusterArgs(c)
	_, err := s.exec(ctx, `UPDATE clusters SET name = ?, profile_id = ?, usr = ?, project = ?, domain = ?, init_at = ?, created_at = ?, updated_at = ?,
		min_size = ?, max_size = ?, desired_capacity = ?, next_index = ?, timeout = ?, status = ?, status_reason = ?, metadata = ?, data = ?, config = ?, dependents = ?
		WHERE id = ?`, append(args[1:], c.ID)...)
	if s.unique(err) {
		return &DuplicateError{Kind: "cluster", Name: c.Name}
	}
	if err != nil {
		return fmt.Errorf("update cluster %s: %w", c.Name, err)
	}
	return nil
}

// DeleteCluster implements Store.
func (s *SQL) DeleteCluster(ctx context.Context, id string) error {
	if err := s.DeleteSetObject(ctx, "cluster", id); err != nil {
		return err
	}
	if _, err := s.exec(ctx, "DELETE FROM bindings WHERE cluster_id = ?", id); err != nil {
		return err
	}
	if _, err := s.exec(ctx, "DELETE FROM health_claims WHERE cluster_id = ?", id); err != nil {
		return err
	}
	if _, err := s.exec(ctx, "DELETE FROM instances WHERE cluster_id = ?", id); err != nil {
		return err
	}
	if _, err := s.exec(ctx, "DELETE FROM expectations WHERE cluster_id = ?", id); err != nil {
		return err
	}
	if _, err := s.exec(ctx, "DELETE FROM node_changes WHERE cluster_id = ?", id); err != nil {
		return err
	}
	// A cluster's receivers go with it, as in Senlin: their webhooks would
	// name a cluster that no longer exists.
	if _, err := s.exec(ctx, "DELETE FROM receivers WHERE cluster_id = ?", id); err != nil {
		return err
	}
	// The groups it holds and the ones it declared on others go too; groups
	// elsewhere naming it stay and find it absent (unsatisfiable), as SMF
	// treats a dependency on an unconfigured instance.
	if _, err := s.exec(ctx, "DELETE FROM cluster_dependencies WHERE cluster_id = ? OR declared_by = ?", id, id); err != nil {
		return err
	}
	_, err := s.exec(ctx, "DELETE FROM clusters WHERE id = ?", id)
	return err
}
