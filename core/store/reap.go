package store

import (
	"context"
	"fmt"
	"time"

	"github.com/grovehq/grove/core/model"
)

// Stamp is what the reaper needs to know of an action or event.
type Stamp struct {
	ID string
	At time.Time
	// Terminal is true for events, and for finished actions whose parent,
	// if any, has finished too (a running parent still reads its children).
	Terminal bool
}

// CrowdedTargets lists the targets (cluster or node ids) of a cluster that
// have more than keep actions.
func (s *SQL) CrowdedTargets(ctx context.Context, clusterID string, keep int) ([]string, error) {
	return s.strings(ctx, "SELECT target FROM actions WHERE cluster_id = ? GROUP BY target HAVING COUNT(*) > ?", clusterID, keep)
}

// CrowdedEventObjects lists the objects of a cluster with more than keep events.
func (s *SQL) CrowdedEventObjects(ctx context.Context, clusterID string, keep int) ([]string, error) {
	return s.strings(ctx, "SELECT oid FROM events WHERE cluster_id = ? GROUP BY oid HAVING COUNT(*) > ?", clusterID, keep)
}

func (s *SQL) strings(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// ActionStamps lists a target's actions for the reaper.
func (s *SQL) ActionStamps(ctx context.Context, target string) ([]Stamp, error) {
	rows, err := s.query(ctx, `SELECT a.id, a.created_at, a.status, COALESCE(p.status, '') FROM actions a
		LEFT JOIN actions p ON p.id = a.parent_id WHERE a.target = ?`, target)
	if err != nil {
		return nil, fmt.Errorf("list actions of %s: %w", target, err)
	}
	defer rows.Close()
	terminal := func(st string) bool {
		return st == model.ActionSucceeded || st == model.ActionFailed || st == model.ActionCancelled
	}
	var out []Stamp
	for rows.Next() {
		var id, st, parent string
		var at int64
		if err := rows.Scan(&id, &at, &st, &parent); err != nil {
			return nil, err
		}
		out = append(out, Stamp{ID: id, At: fromUS(at), Terminal: terminal(st) && (parent == "" || terminal(parent))})
	}
	return out, rows.Err()
}

// EventStamps lists an object's events for the reaper.
func (s *SQL) EventStamps(ctx context.Context, oid string) ([]Stamp, error) {
	rows, err := s.query(ctx, "SELECT id, ts FROM events WHERE oid = ?", oid)
	if err != nil {
		return nil, fmt.Errorf("list events of %s: %w", oid, err)
	}
	defer rows.Close()
	var out []Stamp
	for rows.Next() {
		var id string
		var at int64
		if err := rows.Scan(&id, &at); err != nil {
			return nil, err
		}
		out = append(out, Stamp{ID: id, At: fromUS(at), Terminal: true})
	}
	return out, rows.Err()
}

// DeleteEvents removes events by id.
func (s *SQL) DeleteEvents(ctx context.Context, ids []string) error {
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		in, args := s.idsIn("id", chunk)
		if _, err := s.exec(ctx, "DELETE FROM events WHERE "+in, args...); err != nil {
			return fmt.Errorf("delete events: %w", err)
		}
	}
	return nil
}
