package store

import (
	"context"
	"fmt"
	"time"
)

// ClaimHealth implements Store.
func (s *SQL) ClaimHealth(ctx context.Context, clusterID, owner string, now, until time.Time) (bool, error) {
	// One statement, so two agents racing for a free or expired claim
	// cannot both win: the conflict clause only updates a row that is
	// owner's already or has expired.
	res, err := s.exec(ctx, `INSERT INTO health_claims (cluster_id, owner, expires) VALUES (?, ?, ?)
		ON CONFLICT (cluster_id) DO UPDATE SET owner = excluded.owner, expires = excluded.expires
		WHERE health_claims.owner = excluded.owner OR health_claims.expires < ?`, clusterID, owner, us(until), us(now))
	if err != nil {
		return false, fmt.Errorf("claim the health checks of cluster %s: %w", clusterID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("claim the health checks of cluster %s: %w", clusterID, err)
	}
	return n > 0, nil
}

// TakeHealth implements Store.
func (s *SQL) TakeHealth(ctx context.Context, clusterID, owner string, until time.Time) error {
	if _, err := s.exec(ctx, `INSERT INTO health_claims (cluster_id, owner, expires) VALUES (?, ?, ?)
		ON CONFLICT (cluster_id) DO UPDATE SET owner = excluded.owner, expires = excluded.expires`, clusterID, owner, us(until)); err != nil {
		return fmt.Errorf("take over the health checks of cluster %s: %w", clusterID, err)
	}
	return nil
}

// ReleaseHealth implements Store.
func (s *SQL) ReleaseHealth(ctx context.Context, owner string) error {
	if _, err := s.exec(ctx, "DELETE FROM health_claims WHERE owner = ?", owner); err != nil {
		return fmt.Errorf("release health claims: %w", err)
	}
	return nil
}
