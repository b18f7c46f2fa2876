package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ReplaceSpec implements Store.
func (s *SQL) ReplaceSpec(ctx context.Context, kind, id string, spec, properties map[string]any) error {
	table := map[string]string{"profile": "profiles", "policy": "policies"}[kind]
	if table == "" {
		return fmt.Errorf("replace spec: %q is not profile or policy", kind)
	}
	res, err := s.exec(ctx, "UPDATE "+table+" SET spec = ?, properties = ? WHERE id = ?", toJSON(spec), toJSON(properties), id)
	if err != nil {
		return fmt.Errorf("replace the spec of %s %s: %w", kind, id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return &NotFoundError{Kind: kind, Ident: id}
	}
	return nil
}

// LockSpec implements Store. SQLite needs no lock: its one writer
// connection runs the transactions that reference or delete a profile or
// policy one at a time. PostgreSQL runs them side by side, each statement
// seeing what was committed when it began, so without the row lock a
// deletion's in-use check could miss a reference whose transaction
// commits right after it.
func (s *SQL) LockSpec(ctx context.Context, kind, id string, exclusive bool) error {
	table := map[string]string{"profile": "profiles", "policy": "policies"}[kind]
	if table == "" {
		return fmt.Errorf("lock spec: %q is not profile or policy", kind)
	}
	lock := ""
	if s.dialect == "postgres" {
		lock = " FOR SHARE"
		if exclusive {
			lock = " FOR UPDATE"
		}
	}
	var got string
	err := s.queryRow(ctx, "SELECT id FROM "+table+" WHERE id = ?"+lock, id).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return &NotFoundError{Kind: kind, Ident: id}
	}
	if err != nil {
		return fmt.Errorf("lock %s %s: %w", kind, id, err)
	}
	return nil
}
