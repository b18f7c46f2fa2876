package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/grovehq/grove/core/model"
)

const bindingCols = "id, cluster_id, policy_id, enabled, priority, data, last_op"

func scanBinding(r scanner) (*model.Binding, error) {
	b := &model.Binding{}
	var enabled int
	var data string
	var lastOp sql.NullInt64
	if err := r.Scan(&b.ID, &b.ClusterID, &b.PolicyID, &enabled, &b.Priority, &data, &lastOp); err != nil {
		return nil, err
	}
	b.Enabled, b.Data, b.LastOp = enabled != 0, fromJSON(data), fromUSPtr(lastOp)
	return b, nil
}

// CreateBinding implements Store.
func (s *SQL) CreateBinding(ctx context.Context, b *model.Binding) error {
	_, err := s.exec(ctx, "INSERT INTO bindings ("+bindingCols+") VALUES ("+placeholders(7)+")",
		b.ID, b.ClusterID, b.PolicyID, b2i(b.Enabled), b.Priority, toJSON(b.Data), usPtr(b.LastOp))
	if err != nil {
		return fmt.Errorf("attach policy %s: %w", b.PolicyID, err)
	}
	return nil
}

// GetBinding implements Store.
func (s *SQL) GetBinding(ctx context.Context, clusterID, policyID string) (*model.Binding, error) {
	b, err := scanBinding(s.queryRow(ctx, "SELECT "+bindingCols+" FROM bindings WHERE cluster_id = ? AND policy_id = ?", clusterID, policyID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &NotFoundError{Kind: "policy binding", Ident: policyID}
	}
	return b, err
}

// ListBindings implements Store, ordered by priority.
func (s *SQL) ListBindings(ctx context.Context, clusterID string) ([]*model.Binding, error) {
	rows, err := s.query(ctx, "SELECT "+bindingCols+" FROM bindings WHERE cluster_id = ? ORDER BY priority, id", clusterID)
	if err != nil {
		return nil, fmt.Errorf("list bindings: %w", err)
	}
	defer rows.Close()
	var out []*model.Binding
	for rows.Next() {
		b, err := scanBinding(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// UpdateBinding implements Store.
func (s *SQL) UpdateBinding(ctx context.Context, b *model.Binding) error {
	_, err := s.exec(ctx, "UPDATE bindings SET enabled = ?, priority = ?, data = ?, last_op = ? WHERE id = ?", b2i(b.Enabled), b.Priority, toJSON(b.Data), usPtr(b.LastOp), b.ID)
	return err
}

// DeleteBinding implements Store.
func (s *SQL) DeleteBinding(ctx context.Context, clusterID, policyID string) error {
	_, err := s.exec(ctx, "DELETE FROM bindings WHERE cluster_id = ? AND policy_id = ?", clusterID, policyID)
	return err
}

const eventCols = "id, ts, oid, oname, otype, cluster_id, usr, project, action, status, status_reason, level, meta_data"

func scanEvent(r scanner) (*model.Event, error) {
	e := &model.Event{}
	var ts int64
	var meta string
	if err := r.Scan(&e.ID, &ts, &e.OID, &e.OName, &e.OType, &e.ClusterID, &e.User, &e.Project, &e.Action, &e.Status, &e.StatusReason, &e.Level, &meta); err != nil {
		return nil, err
	}
	e.Timestamp, e.MetaData = fromUS(ts), fromJSON(meta)
	return e, nil
}

// CreateEvents implements Store.
func (s *SQL) CreateEvents(ctx context.Context, events []*model.Event) error {
	return s.insertMany(ctx, "events", eventCols, len(events), func(i int) []any {
		e := events[i]
		return []any{e.ID, us(e.Timestamp), e.OID, e.OName, e.OType, e.ClusterID, e.User, e.Project, e.Action, e.Status, e.StatusReason, e.Level, toJSON(e.MetaData)}
	})
}

// GetEvent implements Store.
func (s *SQL) GetEvent(ctx context.Context, id string) (*model.Event, error) {
	return getOne(ctx, s, "event", "SELECT "+eventCols+" FROM events WHERE id = ?", scanEvent, id)
}

// ListEvents implements Store.
func (s *SQL) ListEvents(ctx context.Context, o ListOpts) ([]*model.Event, error) {
	var out []*model.Event
	err := s.list(ctx, "events", eventCols, o, []string{"ts"}, func(r scanner) (string, error) {
		e, err := scanEvent(r)
		if err != nil {
			return "", err
		}
		out = append(out, e)
		return e.ID, nil
	})
	return out, err
}

// AcquireClusterLock implements Store.
func (s *SQL) AcquireClusterLock(ctx context.Context, clusterID, actionID string, scope int) (bool, error) {
	ok := false
	err := s.InTx(ctx, func(tx Store) error {
		t := tx.(*SQL)
		var idsJSON string
		var sem int
		forUpdate := ""
		if t.dialect == "postgres" {
			forUpdate = " FOR UPDATE"
		}
		err := t.queryRow(ctx, "SELECT action_ids, semaphore FROM cluster_locks WHERE cluster_id = ?"+forUpdate, clusterID).Scan(&idsJSON, &sem)
		if errors.Is(err, sql.ErrNoRows) {
			ids, _ := json.Marshal([]string{actionID})
			if _, err := t.exec(ctx, "INSERT INTO cluster_locks (cluster_id, action_ids, semaphore) VALUES (?, ?, ?)", clusterID, string(ids), scope); err != nil {
				return err
			}
			ok = true
			return nil
		}
		if err != nil {
			return err
		}
		var ids []string
		_ = json.Unmarshal([]byte(idsJSON), &ids)
		if slices.Contains(ids, actionID) {
			ok = true
			return nil
		}
		if scope == LockCluster || sem < 0 {
			// Refused unless a holder ended without releasing (its agent
			// died between recording the end and the release): such a
			// holder would keep the cluster for ever, so its place is free.
			live, err := t.liveActions(ctx, ids)
			if err != nil || len(live) == len(ids) {
				return err
			}
			if ids = live; len(ids) == 0 {
				b, _ := json.Marshal([]string{actionID})
				_, err := t.exec(ctx, "UPDATE cluster_locks SET action_ids = ?, semaphore = ? WHERE cluster_id = ?", string(b), scope, clusterID)
				ok = err == nil
				return err
			}
			// Running shared holders are left: the exclusive lock waits
			// for them, with the ended ones' shares gone.
			b, _ := json.Marshal(ids)
			_, err = t.exec(ctx, "UPDATE cluster_locks SET action_ids = ?, semaphore = ? WHERE cluster_id = ?", string(b), len(ids), clusterID)
			return err
		}
		if scope == LockNode && sem > 0 {
			ids = append(ids, actionID)
			b, _ := json.Marshal(ids)
			_, err := t.exec(ctx, "UPDATE cluster_locks SET action_ids = ?, semaphore = ? WHERE cluster_id = ?", string(b), sem+1, clusterID)
			ok = err == nil
			return err
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("lock cluster %s: %w", clusterID, err)
	}
	return ok, nil
}

// liveActions returns those of ids whose action exists and has not ended,
// in their order: only such an action can still release a lock it holds.
func (s *SQL) liveActions(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	found, err := s.ids(ctx, "SELECT id FROM actions WHERE status NOT IN (?, ?, ?) AND id IN ("+placeholders(len(ids))+")",
		append([]any{model.ActionSucceeded, model.ActionFailed, model.ActionCancelled}, anys(ids)...)...)
	if err != nil {
		return nil, fmt.Errorf("read the lock's holders: %w", err)
	}
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return !slices.Contains(found, id) }), nil
}

// ReleaseClusterLock implements Store.
func (s *SQL) ReleaseClusterLock(ctx context.Context, clusterID, actionID string) error {
	return s.InTx(ctx, func(tx Store) error {
		t := tx.(*SQL)
		var idsJSON string
		var sem int
		err := t.queryRow(ctx, "SELECT action_ids, semaphore FROM cluster_locks WHERE cluster_id = ?", clusterID).Scan(&idsJSON, &sem)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		var ids []string
		_ = json.Unmarshal([]byte(idsJSON), &ids)
		i := slices.Index(ids, actionID)
		if i < 0 {
			return nil
		}
		ids = slices.Delete(ids, i, i+1)
		if len(ids) == 0 {
			_, err = t.exec(ctx, "DELETE FROM cluster_locks WHERE cluster_id = ?", clusterID)
			return err
		}
		b, _ := json.Marshal(ids)
		_, err = t.exec(ctx, "UPDATE cluster_locks SET action_ids = ?, semaphore = ? WHERE cluster_id = ?", string(b), sem-1, clusterID)
		return err
	})
}

// AcquireNodeLock implements Store.
func (s *SQL) AcquireNodeLock(ctx context.Context, nodeID, actionID string) (bool, error) {
	ok := false
	err := s.InTx(ctx, func(tx Store) error {
		t := tx.(*SQL)
		var holder string
		err := t.queryRow(ctx, "SELECT action_id FROM node_locks WHERE node_id = ?", nodeID).Scan(&holder)
		if errors.Is(err, sql.ErrNoRows) {
			_, err = t.exec(ctx, "INSERT INTO node_locks (node_id, action_id) VALUES (?, ?)", nodeID, actionID)
			ok = err == nil
			return err
		}
		if err != nil || holder == actionID {
			ok = err == nil
			return err
		}
		live, err := t.liveActions(ctx, []string{holder})
		if err != nil || len(live) > 0 {
			return err
		}
		// The holder ended without releasing the node (see
		// AcquireClusterLock): the lock is free.
		_, err = t.exec(ctx, "UPDATE node_locks SET action_id = ? WHERE node_id = ? AND action_id = ?", actionID, nodeID, holder)
		ok = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("lock node %s: %w", nodeID, err)
	}
	return ok, nil
}

// ReleaseNodeLock implements Store.
func (s *SQL) ReleaseNodeLock(ctx context.Context, nodeID, actionID string) error {
	_, err := s.exec(ctx, "DELETE FROM node_locks WHERE node_id = ? AND action_id = ?", nodeID, actionID)
	return err
}

// NodeCounts implements Store.
func (s *SQL) NodeCounts(ctx context.Context) ([]NodeCount, error) {
	rows, err := s.query(ctx, "SELECT n.project, COALESCE(c.name, ''), n.status, COUNT(*) FROM nodes n "+
		"LEFT JOIN clusters c ON c.id = n.cluster_id GROUP BY n.project, c.name, n.status")
	if err != nil {
		return nil, fmt.Errorf("count nodes: %w", err)
	}
	defer rows.Close()
	var out []NodeCount
	for rows.Next() {
		var c NodeCount
		if err := rows.Scan(&c.Project, &c.Cluster, &c.Status, &c.Count); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ActionCounts implements Store.
func (s *SQL) ActionCounts(ctx context.Context) ([]ActionCount, error) {
	rows, err := s.query(ctx, "SELECT action, status, COUNT(*) FROM actions WHERE "+pendingTerm+" AND status IN (?, ?, ?, ?) GROUP BY action, status",
		model.ActionInit, model.ActionWaiting, model.ActionReady, model.ActionRunning)
	if err != nil {
		return nil, fmt.Errorf("count actions: %w", err)
	}
	defer rows.Close()
	var out []ActionCount
	for rows.Next() {
		var c ActionCount
		if err := rows.Scan(&c.Action, &c.Status, &c.Count); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
