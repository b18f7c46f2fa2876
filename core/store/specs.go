package store

import (
	"context"
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
