package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/grovehq/grove/core/model"
)

const hostCols = "name, kind, driver, labels, operator_labels, load, state, availability, heartbeat, created_at, updated_at"

func scanHost(r scanner) (*model.Host, error) {
	h := &model.Host{}
	var labels, opLabels, load string
	var beat, created int64
	var updated sql.NullInt64
	if err := r.Scan(&h.Name, &h.Kind, &h.Driver, &labels, &opLabels, &load, &h.State, &h.Availability, &beat, &created, &updated); err != nil {
		return nil, err
	}
	h.Labels, h.OperatorLabels = map[string]string{}, map[string]string{}
	h.Load = map[string]float64{}
	// Columns written by this file only; a damaged value reads as empty
	// rather than hiding the host.
	_ = json.Unmarshal([]byte(labels), &h.Labels)
	_ = json.Unmarshal([]byte(opLabels), &h.OperatorLabels)
	_ = json.Unmarshal([]byte(load), &h.Load)
	h.Heartbeat, h.CreatedAt, h.UpdatedAt = fromUS(beat), fromUS(created), fromUSPtr(updated)
	return h, nil
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return "{}"
	}
	return string(b)
}

// ReportHost implements Store.
func (s *SQL) ReportHost(ctx context.Context, h *model.Host) error {
	avail := h.Availability
	if avail == "" {
		avail = model.HostActive
	}
	// One statement: an agent's heartbeat and a second agent marking the
	// host down cannot interleave into a lost update.
	_, err := s.exec(ctx, `INSERT INTO hosts (`+hostCols+`) VALUES (`+placeholders(11)+`)
		ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, driver = excluded.driver, labels = excluded.labels, load = excluded.load,
		state = excluded.state, heartbeat = excluded.heartbeat, updated_at = excluded.created_at`,
		h.Name, h.Kind, h.Driver, jsonOf(h.Labels), jsonOf(h.OperatorLabels), jsonOf(h.Load), h.State, avail, us(h.Heartbeat), us(h.Heartbeat), nil)
	if err != nil {
		return fmt.Errorf("record host %s: %w", h.Name, err)
	}
	return nil
}

// GetHost implements Store.
func (s *SQL) GetHost(ctx context.Context, name string) (*model.Host, error) {
	return getOne(ctx, s, "host", "SELECT "+hostCols+" FROM hosts WHERE name = ?", scanHost, name)
}

// ListHosts implements Store.
func (s *SQL) ListHosts(ctx context.Context) ([]*model.Host, error) {
	rows, err := s.query(ctx, "SELECT "+hostCols+" FROM hosts ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("list hosts: %w", err)
	}
	defer rows.Close()
	var out []*model.Host
	for rows.Next() {
		h, err := scanHost(rows)
		if err != nil {
			return nil, fmt.Errorf("list hosts: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// UpdateHost implements Store.
func (s *SQL) UpdateHost(ctx context.Context, h *model.Host) error {
	res, err := s.exec(ctx, "UPDATE hosts SET availability = ?, operator_labels = ?, updated_at = ? WHERE name = ?",
		h.Availability, jsonOf(h.OperatorLabels), usPtr(h.UpdatedAt), h.Name)
	if err != nil {
		return fmt.Errorf("update host %s: %w", h.Name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return &NotFoundError{Kind: "host", Ident: h.Name}
	}
	return nil
}

// SetHostState implements Store.
func (s *SQL) SetHostState(ctx context.Context, name, state string, at time.Time) error {
	if _, err := s.exec(ctx, "UPDATE hosts SET state = ?, updated_at = ? WHERE name = ?", state, us(at), name); err != nil {
		return fmt.Errorf("set the state of host %s: %w", name, err)
	}
	return nil
}

// MarkHostsDown implements Store.
func (s *SQL) MarkHostsDown(ctx context.Context, before, at time.Time) ([]string, error) {
	// One conditional UPDATE: agents racing to mark the same host down
	// each see the row after the other's write (PostgreSQL re-checks the
	// WHERE clause of a row updated meanwhile), so one of them reports it.
	rows, err := s.query(ctx, "UPDATE hosts SET state = ?, updated_at = ? WHERE kind = ? AND state = ? AND heartbeat < ? RETURNING name",
		model.HostDown, us(at), model.HostAgent, model.HostUp, us(before))
	if err != nil {
		return nil, fmt.Errorf("mark hosts down: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("mark hosts down: %w", err)
		}
		out = append(out, name)
	}
	return out, rows.Err()
}

// HostNodeCounts implements Store.
func (s *SQL) HostNodeCounts(ctx context.Context) (map[string]int, error) {
	rows, err := s.query(ctx, "SELECT host, COUNT(*) FROM nodes WHERE host <> '' GROUP BY host")
	if err != nil {
		return nil, fmt.Errorf("count nodes by host: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var host string
		var n int
		if err := rows.Scan(&host, &n); err != nil {
			return nil, fmt.Errorf("count nodes by host: %w", err)
		}
		out[host] = n
	}
	return out, rows.Err()
}

// HostClusters implements Store.
func (s *SQL) HostClusters(ctx context.Context, host string) ([]string, error) {
	rows, err := s.query(ctx, "SELECT DISTINCT cluster_id FROM nodes WHERE host = ? AND cluster_id <> ''", host)
	if err != nil {
		return nil, fmt.Errorf("list the clusters of host %s: %w", host, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("list the clusters of host %s: %w", host, err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
