package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ClaimHealth implements Store.
func (s *SQL) ClaimHealth(ctx context.Context, clusterIDs []string, owner string, now, until time.Time) ([]string, error) {
	var mine []string
	for start := 0; start < len(clusterIDs); start += 300 {
		chunk := clusterIDs[start:min(start+300, len(clusterIDs))]
		args := make([]any, 0, 3*len(chunk)+1)
		for _, id := range chunk {
			args = append(args, id, owner, us(until))
		}
		args = append(args, us(now))
		// One statement, so two agents racing for a free or expired claim
		// cannot both win: the conflict clause only updates a row that is
		// owner's already or has expired, and only written rows come back.
		rows, err := s.query(ctx, `INSERT INTO health_claims (cluster_id, owner, expires) VALUES `+
			strings.TrimSuffix(strings.Repeat("(?, ?, ?),", len(chunk)), ",")+`
			ON CONFLICT (cluster_id) DO UPDATE SET owner = excluded.owner, expires = excluded.expires
			WHERE health_claims.owner = excluded.owner OR health_claims.expires < ?
			RETURNING cluster_id`, args...)
		if err != nil {
			return nil, fmt.Errorf("claim health checks: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("claim health checks: %w", err)
			}
			mine = append(mine, id)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("claim health checks: %w", err)
		}
	}
	return mine, nil
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
