package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/grovehq/grove/core/model"
)

// ErrConflict is returned (wrapped) when a versioned write finds that
// another writer changed the row since it was read.
var ErrConflict = errors.New("changed by another writer")

// ConflictError names the row a versioned write lost on.
type ConflictError struct {
	Kind  string
	Ident string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("The %s %s was changed by another writer; read it again and retry.", e.Kind, e.Ident)
}

// Unwrap lets errors.Is(err, ErrConflict) match.
func (e *ConflictError) Unwrap() error { return ErrConflict }

const instanceCols = "cluster_id, host, state, since, frozen, outcome, restarts, reason, version, updated_at"

func scanInstance(r scanner) (*model.Instance, error) {
	x := &model.Instance{}
	var since, updated int64
	var frozen int
	if err := r.Scan(&x.ClusterID, &x.Host, &x.State, &since, &frozen, &x.Outcome, &x.Restarts, &x.Reason, &x.Version, &updated); err != nil {
		return nil, err
	}
	x.Since, x.Frozen, x.UpdatedAt = fromUS(since), frozen != 0, fromUS(updated)
	return x, nil
}

// ListInstances implements Store.
func (s *SQL) ListInstances(ctx context.Context, clusterID string) ([]*model.Instance, error) {
	rows, err := s.query(ctx, "SELECT "+instanceCols+" FROM instances WHERE cluster_id = ? ORDER BY host", clusterID)
	if err != nil {
		return nil, fmt.Errorf("list the instances of cluster %s: %w", clusterID, err)
	}
	defer rows.Close()
	var out []*model.Instance
	for rows.Next() {
		x, err := scanInstance(rows)
		if err != nil {
			return nil, fmt.Errorf("list the instances of cluster %s: %w", clusterID, err)
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// PutInstance implements Store.
func (s *SQL) PutInstance(ctx context.Context, x *model.Instance) error {
	ident := x.ClusterID + " on " + x.Host
	var res interface{ RowsAffected() (int64, error) }
	var err error
	if x.Version == 0 {
		// ON CONFLICT DO NOTHING turns a racing second insert into zero
		// rows, the same answer as a stale update.
		res, err = s.exec(ctx, "INSERT INTO instances ("+instanceCols+") VALUES ("+placeholders(10)+") ON CONFLICT (cluster_id, host) DO NOTHING",
			x.ClusterID, x.Host, x.State, us(x.Since), b2i(x.Frozen), x.Outcome, x.Restarts, x.Reason, 1, us(x.UpdatedAt))
	} else {
		res, err = s.exec(ctx, `UPDATE instances SET state = ?, since = ?, frozen = ?, outcome = ?, restarts = ?, reason = ?, version = ?, updated_at = ?
			WHERE cluster_id = ? AND host = ? AND version = ?`,
			x.State, us(x.Since), b2i(x.Frozen), x.Outcome, x.Restarts, x.Reason, x.Version+1, us(x.UpdatedAt), x.ClusterID, x.Host, x.Version)
	}
	if err != nil {
		return fmt.Errorf("record the instance of cluster %s: %w", ident, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return &ConflictError{Kind: "instance of cluster", Ident: ident}
	}
	x.Version++
	return nil
}

// DeleteInstance implements Store.
func (s *SQL) DeleteInstance(ctx context.Context, clusterID, host string) error {
	if _, err := s.exec(ctx, "DELETE FROM instances WHERE cluster_id = ? AND host = ?", clusterID, host); err != nil {
		return fmt.Errorf("delete the instance of cluster %s on %s: %w", clusterID, host, err)
	}
	return nil
}

const expectationCols = "cluster_id, kind, host, since, action_id, reason, version, updated_at"

// GetExpectation implements Store.
func (s *SQL) GetExpectation(ctx context.Context, clusterID string) (*model.Expectation, error) {
	rows, err := s.query(ctx, "SELECT "+expectationCols+" FROM expectations WHERE cluster_id = ?", clusterID)
	if err != nil {
		return nil, fmt.Errorf("read the expectation of cluster %s: %w", clusterID, err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, rows.Err()
	}
	x := &model.Expectation{}
	var since, updated int64
	if err := rows.Scan(&x.ClusterID, &x.Kind, &x.Host, &since, &x.ActionID, &x.Reason, &x.Version, &updated); err != nil {
		return nil, fmt.Errorf("read the expectation of cluster %s: %w", clusterID, err)
	}
	x.Since, x.UpdatedAt = fromUS(since), fromUS(updated)
	return x, rows.Err()
}

// PutExpectation implements Store.
func (s *SQL) PutExpectation(ctx context.Context, x *model.Expectation) error {
	var res interface{ RowsAffected() (int64, error) }
	var err error
	if x.Version == 0 {
		res, err = s.exec(ctx, "INSERT INTO expectations ("+expectationCols+") VALUES ("+placeholders(8)+") ON CONFLICT (cluster_id) DO NOTHING",
			x.ClusterID, x.Kind, x.Host, us(x.Since), x.ActionID, x.Reason, 1, us(x.UpdatedAt))
	} else {
		res, err = s.exec(ctx, `UPDATE expectations SET kind = ?, host = ?, since = ?, action_id = ?, reason = ?, version = ?, updated_at = ?
			WHERE cluster_id = ? AND version = ?`,
			x.Kind, x.Host, us(x.Since), x.ActionID, x.Reason, x.Version+1, us(x.UpdatedAt), x.ClusterID, x.Version)
	}
	if err != nil {
		return fmt.Errorf("record the expectation of cluster %s: %w", x.ClusterID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return &ConflictError{Kind: "expectation of cluster", Ident: x.ClusterID}
	}
	x.Version++
	return nil
}
