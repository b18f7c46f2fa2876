package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/grovehq/grove/core/model"
)

// pendingTerm and readyTerm are the conditions of migration 0015's partial
// indexes on actions, word for word: an action is in them only while it
// waits or runs, so finishing one moves no entry of theirs, and most of
// what actions hold (the ended ones) costs them nothing. failedTerm is
// migration 0016's, whose index holds the failed and cancelled actions
// only. SQLite uses a partial index only for a query that states its
// condition as a term of its own, with the same constants (not
// parameters); PostgreSQL proves the same from the term.
const (
	pendingTerm = "status IN ('" + model.ActionInit + "', '" + model.ActionReady + "', '" + model.ActionRunning + "', '" + model.ActionWaiting + "', '" + model.ActionWaitingLifecycle + "')"
	readyTerm   = "status = '" + model.ActionReady + "'"
	failedTerm  = "status IN ('" + model.ActionFailed + "', '" + model.ActionCancelled + "')"
)

const actionCols = "id, name, cluster_id, target, action, cause, owner, lease_expires, start_time, end_time, timeout, status, status_reason, control, inputs, outputs, data, parent_id, usr, project, created_at, updated_at"

func scanAction(r scanner) (*model.Action, error) {
	a := &model.Action{}
	var lease, created int64
	var updated sql.NullInt64
	var inputs, outputs, data string
	if err := r.Scan(&a.ID, &a.Name, &a.ClusterID, &a.Target, &a.Action, &a.Cause, &a.Owner, &lease, &a.StartTime, &a.EndTime,
		&a.Timeout, &a.Status, &a.StatusReason, &a.Control, &inputs, &outputs, &data, &a.ParentID, &a.User, &a.Project, &created, &updated); err != nil {
		return nil, err
	}
	a.LeaseExpires, a.CreatedAt, a.UpdatedAt = fromUS(lease), fromUS(created), fromUSPtr(updated)
	a.Inputs, a.Outputs, a.Data = fromJSON(inputs), fromJSON(outputs), fromJSON(data)
	return a, nil
}

func actionArgs(a *model.Action) []any {
	return []any{a.ID, a.Name, a.ClusterID, a.Target, a.Action, a.Cause, a.Owner, us(a.LeaseExpires), a.StartTime, a.EndTime,
		a.Timeout, a.Status, a.StatusReason, a.Control, toJSON(a.Inputs), toJSON(a.Outputs), toJSON(a.Data), a.ParentID,
		a.User, a.Project, us(a.CreatedAt), usPtr(a.UpdatedAt)}
}

// CreateActions implements Store.
func (s *SQL) CreateActions(ctx context.Context, actions []*model.Action) error {
	return s.InTx(ctx, func(tx Store) error {
		t := tx.(*SQL)
		if err := t.insertMany(ctx, "actions", actionCols, len(actions), func(i int) []any { return actionArgs(actions[i]) }); err != nil {
			return err
		}
		return t.countInserted(ctx, "action_counts", []string{"parent_id", "action", "status"}, len(actions), func(i int) ([3]string, bool) {
			a := actions[i]
			return [3]string{a.ParentID, a.Action, a.Status}, a.ParentID != ""
		})
	})
}

// GetAction implements Store.
func (s *SQL) GetAction(ctx context.Context, id string) (*model.Action, error) {
	return getOne(ctx, s, "action", "SELECT "+actionCols+" FROM actions WHERE id = ?", scanAction, id)
}

// FindAction implements Store.
func (s *SQL) FindAction(ctx context.Context, project, ident string) (a *model.Action, err error) {
	err = s.find(ctx, "action", "actions", project, ident, func(id string) error { a, err = s.GetAction(ctx, id); return err })
	return a, err
}

// ListActions implements Store.
func (s *SQL) ListActions(ctx context.Context, o ListOpts) ([]*model.Action, error) {
	var out []*model.Action
	err := s.list(ctx, "actions", actionCols, o, []string{"created_at"}, func(r scanner) (string, error) {
		a, err := scanAction(r)
		if err != nil {
			return "", err
		}
		out = append(out, a)
		return a.ID, nil
	})
	return out, err
}

func (s *SQL) actionsWhere(ctx context.Context, where string, args ...any) ([]*model.Action, error) {
	rows, err := s.query(ctx, "SELECT "+actionCols+" FROM actions WHERE "+where, args...)
	if err != nil {
		return nil, fmt.Errorf("query actions: %w", err)
	}
	return scanActions(rows)
}

// scanActions reads and closes rows of actionCols.
func scanActions(rows *sql.Rows) ([]*model.Action, error) {
	defer rows.Close()
	var out []*model.Action
	for rows.Next() {
		a, err := scanAction(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// UpdateActions implements Store. One prepared statement serves the batch.
func (s *SQL) UpdateActions(ctx context.Context, actions []*model.Action) error {
	if len(actions) == 0 {
		return nil
	}
	return s.InTx(ctx, func(tx Store) error {
		t := tx.(*SQL)
		stmt, err := t.q.(*sql.Tx).PrepareContext(ctx, t.rebind(`UPDATE actions SET name = ?, cluster_id = ?, target = ?, action = ?, cause = ?, owner = ?, lease_expires = ?, start_time = ?, end_time = ?,
				timeout = ?, status = ?, status_reason = ?, control = ?, inputs = ?, outputs = ?, data = ?, parent_id = ?, usr = ?, project = ?, created_at = ?, updated_at = ?
				WHERE id = ?`))
		if err != nil {
			return fmt.Errorf("prepare action update: %w", err)
		}
		defer stmt.Close()
		for _, a := range actions {
			args := actionArgs(a)
			if _, err := stmt.ExecContext(ctx, append(args[1:], a.ID)...); err != nil {
				return fmt.Errorf("update action %s: %w", a.ID, err)
			}
		}
		return nil
	})
}

// FinishActions implements Store.
func (s *SQL) FinishActions(ctx context.Context, ids []string, status, reason string, at time.Time) error {
	return s.batchTx(ctx, func(t *SQL) error {
		for start := 0; start < len(ids); start += 500 {
			chunk := ids[start:min(start+500, len(ids))]
			in, idArgs := t.idsIn("id", chunk)
			args := append([]any{status, reason, float64(at.UnixMicro()) / 1e6, us(at)}, idArgs...)
			if _, err := t.exec(ctx, "UPDATE actions SET status = ?, status_reason = ?, owner = '', end_time = ?, updated_at = ? WHERE "+in, args...); err != nil {
				return fmt.Errorf("finish actions: %w", err)
			}
		}
		return nil
	})
}

// ClaimActions implements Store.
func (s *SQL) ClaimActions(ctx context.Context, owner, host string, until time.Time, nodeLevel bool, max int) ([]*model.Action, error) {
	var claimed []*model.Action
	err := s.batchTx(ctx, func(t *SQL) error {
		// The order in which actions are claimed, and the lock that keeps
		// other agents off them. On PostgreSQL the order is an expression
		// that only the partial indexes of migration 0015 yield, so that
		// the planner cannot walk actions_created (every action ever kept)
		// or actions_parent_created (a parent's claimed children too) and
		// filter; it chose both, by turns, while its statistics lagged a
		// create's burst of children. SQLite keeps no statistics here and
		// plans by its own rules (plans_test.go), and has one writer.
		order, lock := "created_at, id", ""
		if t.dialect == "postgres" {
			order, lock = "created_at + 0, id", " FOR UPDATE SKIP LOCKED"
		}
		// An action on another host's node is left to that host's agent,
		// unless that host is down or gone: then any agent takes it, so
		// that nothing waits for a dead host (the engine forgets a deleted
		// node and fails the node's other actions without a driver call).
		// "host > ''" is "host <> ''" for text, in a form the nodes_host
		// index can answer: PostgreSQL may compute the subquery once for
		// the whole claim, and then reads only the nodes placed on hosts
		// instead of every node.
		mine := ` AND NOT EXISTS (SELECT 1 FROM nodes WHERE nodes.id = actions.target AND nodes.host > '' AND nodes.host <> ?
			AND EXISTS (SELECT 1 FROM hosts WHERE hosts.name = nodes.host AND hosts.state <> 'down'))`
		var ids []string
		if nodeLevel {
			var parent, name string
			err := t.queryRow(ctx, "SELECT parent_id, action FROM actions WHERE "+pendingTerm+" AND "+readyTerm+" AND parent_id <> ''"+mine+" ORDER BY "+order+" LIMIT 1"+lock, host).Scan(&parent, &name)
			if err == sql.ErrNoRows {
				return nil
			}
			if err != nil {
				return err
			}
			rows, err := t.query(ctx, "SELECT id FROM actions WHERE "+readyTerm+" AND parent_id = ? AND action = ?"+mine+" ORDER BY "+order+" LIMIT ?"+lock, parent, name, host, max)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return err
				}
				ids = append(ids, id)
			}
			rows.Close()
		} else {
			var id string
			err := t.queryRow(ctx, "SELECT id FROM actions WHERE "+readyTerm+" AND parent_id = ''"+mine+" ORDER BY "+order+" LIMIT 1"+lock, host).Scan(&id)
			if err == sql.ErrNoRows {
				return nil
			}
			if err != nil {
				return err
			}
			ids = []string{id}
		}
		if len(ids) == 0 {
			return nil
		}
		now := time.Now()
		args := []any{model.ActionRunning, "The action is being processed.", owner, us(until), float64(now.UnixMicro()) / 1e6, us(now)}
		// On PostgreSQL the selection locked its rows (FOR UPDATE): they
		// are still READY, and a second look at the status only misled
		// the planner, whose statistics lag a burst of new actions, into
		// walking every READY action instead of looking up the ids.
		// SQLite checks again, with the term kept out of its choice of
		// index.
		ready := ""
		if t.dialect != "postgres" {
			ready, args = t.unindexed("status")+" = ? AND ", append(args, model.ActionReady)
		}
		in, idArgs := t.idsIn("id", ids)
		args = append(args, idArgs...)
		// The update returns the claimed rows: no second statement (a
		// round trip on PostgreSQL) reads them back.
		rows, err := t.query(ctx, "UPDATE actions SET status = ?, status_reason = ?, owner = ?, lease_expires = ?, start_time = CASE WHEN start_time = 0 THEN ? ELSE start_time END, updated_at = ? WHERE "+ready+in+" RETURNING "+actionCols, args...)
		if err != nil {
			return err
		}
		got, err := scanActions(rows)
		if err != nil {
			return err
		}
		// In creation order, sorted here: RETURNING has no order, and an
		// ORDER BY would have SQLite walk an index in that order rather
		// than look up the ids.
		slices.SortFunc(got, func(a, b *model.Action) int {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
		})
		claimed = got
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim actions: %w", err)
	}
	return claimed, nil
}

// RenewLeases implements Store.
func (s *SQL) RenewLeases(ctx context.Context, owner string, ids []string, until time.Time) error {
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		in, idArgs := s.idsIn("id", chunk)
		args := append([]any{us(until), owner, model.ActionRunning}, idArgs...)
		if _, err := s.exec(ctx, "UPDATE actions SET lease_expires = ? WHERE "+s.unindexed("owner")+" = ? AND "+s.unindexed("status")+" = ? AND "+in, args...); err != nil {
			return fmt.Errorf("renew leases: %w", err)
		}
	}
	return nil
}

// ReclaimActions implements Store.
func (s *SQL) ReclaimActions(ctx context.Context, owner string, now time.Time) (int, error) {
	res, err := s.exec(ctx, "UPDATE actions SET status = ?, owner = '', status_reason = ? WHERE "+pendingTerm+" AND status = '"+model.ActionRunning+"' AND (lease_expires < ? OR (owner = ? AND owner <> ''))",
		model.ActionReady, "The action was reclaimed after its worker stopped.", us(now), owner)
	if err != nil {
		return 0, fmt.Errorf("reclaim actions: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// Children implements Store.
func (s *SQL) Children(ctx context.Context, parentID string) ([]*model.Action, error) {
	return s.actionsWhere(ctx, "parent_id = ? ORDER BY created_at, id", parentID)
}

// ChildIDs implements Store.
func (s *SQL) ChildIDs(ctx context.Context, parentID string, limit int) ([]string, error) {
	ids, err := s.ids(ctx, "SELECT id FROM actions WHERE parent_id = ? ORDER BY created_at, id LIMIT ?", parentID, limit)
	if err != nil {
		return nil, fmt.Errorf("list children of action %s: %w", parentID, err)
	}
	return ids, nil
}

// CountChildren implements Store. It reads the counts migration 0013 keeps
// up to date (action_counts), a few rows per kind and status whatever the
// number of children, not the children.
func (s *SQL) CountChildren(ctx context.Context, parentID string) ([]ChildCount, error) {
	rows, err := s.query(ctx, "SELECT action, status, CAST(SUM(n) AS BIGINT), COUNT(*) FROM action_counts WHERE parent_id = ? GROUP BY action, status", parentID)
	if err != nil {
		return nil, fmt.Errorf("count children of action %s: %w", parentID, err)
	}
	defer rows.Close()
	var out []ChildCount
	deltas := 0
	for rows.Next() {
		var c ChildCount
		var k int
		if err := rows.Scan(&c.Action, &c.Status, &c.N, &k); err != nil {
			return nil, fmt.Errorf("count children of action %s: %w", parentID, err)
		}
		if c.N != 0 {
			out = append(out, c)
		}
		deltas += k - 1
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count children of action %s: %w", parentID, err)
	}
	rows.Close()
	s.compactCounts(ctx, deltas, `WITH gone AS (DELETE FROM action_counts WHERE parent_id = ? RETURNING action, status, n)
		INSERT INTO action_counts (parent_id, action, status, n) SELECT CAST(? AS TEXT), action, status, SUM(n) FROM gone GROUP BY action, status HAVING SUM(n) <> 0`, parentID, parentID)
	return out, nil
}

// compactAfter is how many surplus delta rows a PostgreSQL count may sum
// before the read that found them folds them into one row per key.
const compactAfter = 64

// compactCounts folds the delta rows of one key of a count table on
// PostgreSQL (migration 0013) when a read found more than compactAfter
// surplus rows. fold deletes the key's rows and inserts their sums as one
// statement: rows appended meanwhile by uncommitted writers are not seen
// and stay, and a concurrent fold of the same key waits for this one's
// row locks, then finds those rows gone and skips them, so every delta
// is counted exactly once. The caller has already read the counts; a
// failed fold only leaves the rows for the next read, so its error is
// dropped. Inside a transaction nothing is folded: a failed statement
// would abort the caller's transaction.
func (s *SQL) compactCounts(ctx context.Context, surplus int, fold string, args ...any) {
	if s.dialect != "postgres" || s.inTx() || surplus <= compactAfter {
		return
	}
	_, _ = s.exec(ctx, fold, args...)
}

// SummarizeChildren implements Store, from the children's counts.
func (s *SQL) SummarizeChildren(ctx context.Context, parentID string) (ChildSummary, error) {
	var sum ChildSummary
	counts, err := s.CountChildren(ctx, parentID)
	if err != nil {
		return sum, fmt.Errorf("summarize children: %w", err)
	}
	for _, c := range counts {
		sum.Total += c.N
		switch c.Status {
		case model.ActionSucceeded:
		case model.ActionFailed, model.ActionCancelled:
			sum.Failed += c.N
		default:
			sum.Pending += c.N
		}
	}
	if sum.Failed > 0 {
		err := s.queryRow(ctx, "SELECT status_reason FROM actions WHERE parent_id = ? AND "+failedTerm+" ORDER BY updated_at, id LIMIT 1",
			parentID).Scan(&sum.FirstFailure)
		if err != nil {
			return sum, err
		}
	}
	return sum, nil
}

// ActiveActions implements Store.
func (s *SQL) ActiveActions(ctx context.Context, target string) ([]*model.Action, error) {
	return s.actionsWhere(ctx, "target = ? AND status IN (?, ?, ?, ?, ?) ORDER BY created_at, id", target, model.ActionInit, model.ActionReady, model.ActionRunning, model.ActionWaiting, model.ActionWaitingLifecycle)
}

// SignalChildren implements Store.
func (s *SQL) SignalChildren(ctx context.Context, parentID, control string, now time.Time) error {
	// The children that wait or run are found through actions_pending or
	// the parent's children through actions_parent_created, whichever
	// SQLite guesses the smaller: no index holds a parent's children by
	// status (migration 0016), and a signal is rare.
	if _, err := s.exec(ctx, "UPDATE actions SET control = ? WHERE parent_id = ? AND "+pendingTerm, control, parentID); err != nil {
		return fmt.Errorf("signal children: %w", err)
	}
	if control == model.SignalCancel {
		if _, err := s.exec(ctx, "UPDATE actions SET status = ?, status_reason = ?, end_time = ?, updated_at = ? WHERE parent_id = ? AND "+pendingTerm+" AND status <> ?",
			model.ActionCancelled, "The action was cancelled.", float64(now.UnixMicro())/1e6, us(now), parentID, model.ActionRunning); err != nil {
			return fmt.Errorf("cancel children: %w", err)
		}
	}
	return nil
}

// ReleaseLifecycle implements Store.
func (s *SQL) ReleaseLifecycle(ctx context.Context, parentID, id, reason string, now time.Time) (int, error) {
	q, args := "UPDATE actions SET status = ?, status_reason = ?, updated_at = ? WHERE parent_id = ? AND "+pendingTerm+" AND status = ?",
		[]any{model.ActionReady, reason, us(now), parentID, model.ActionWaitingLifecycle}
	if id != "" {
		q, args = q+" AND id = ?", append(args, id)
	}
	res, err := s.exec(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("release lifecycle hook: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// DeleteActions implements Store.
func (s *SQL) DeleteActions(ctx context.Context, ids []string) error {
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		in, args := s.idsIn("id", chunk)
		if _, err := s.exec(ctx, "DELETE FROM actions WHERE "+in, args...); err != nil {
			return fmt.Errorf("delete actions: %w", err)
		}
	}
	return nil
}
