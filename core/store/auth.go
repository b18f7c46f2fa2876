package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/grovehq/grove/core/model"
)

const tokenCols = "id, name, project, role, hash, created_at, expires_at, created_by"

func scanToken(r scanner) (*model.Token, error) {
	t := &model.Token{}
	var created int64
	var expires sql.NullInt64
	if err := r.Scan(&t.ID, &t.Name, &t.Project, &t.Role, &t.Hash, &created, &expires, &t.CreatedBy); err != nil {
		return nil, err
	}
	t.CreatedAt, t.ExpiresAt = fromUS(created), fromUSPtr(expires)
	return t, nil
}

// CreateToken implements Store.
func (s *SQL) CreateToken(ctx context.Context, t *model.Token) error {
	_, err := s.exec(ctx, "INSERT INTO tokens ("+tokenCols+") VALUES ("+placeholders(8)+")",
		t.ID, t.Name, t.Project, t.Role, t.Hash, us(t.CreatedAt), usPtr(t.ExpiresAt), t.CreatedBy)
	if err != nil {
		return fmt.Errorf("create token %s: %w", t.ID, err)
	}
	return nil
}

// GetToken implements Store.
func (s *SQL) GetToken(ctx context.Context, id string) (*model.Token, error) {
	return getOne(ctx, s, "token", "SELECT "+tokenCols+" FROM tokens WHERE id = ?", scanToken, id)
}

// TokenByHash implements Store.
func (s *SQL) TokenByHash(ctx context.Context, hash string) (*model.Token, error) {
	t, err := scanToken(s.queryRow(ctx, "SELECT "+tokenCols+" FROM tokens WHERE hash = ?", hash))
	if errors.Is(err, sql.ErrNoRows) {
		// The hash is not named: it is derived from a secret.
		return nil, &NotFoundError{Kind: "token", Ident: "(by secret)"}
	}
	if err != nil {
		return nil, fmt.Errorf("look up a token: %w", err)
	}
	return t, nil
}

// ListTokens implements Store.
func (s *SQL) ListTokens(ctx context.Context) ([]*model.Token, error) {
	rows, err := s.query(ctx, "SELECT "+tokenCols+" FROM tokens ORDER BY created_at, id")
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	var out []*model.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// DeleteToken implements Store.
func (s *SQL) DeleteToken(ctx context.Context, id string) error {
	res, err := s.exec(ctx, "DELETE FROM tokens WHERE id = ?", id)
	if err != nil {
		return fmt.Errorf("delete token %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return &NotFoundError{Kind: "token", Ident: id}
	}
	return nil
}

// ListGrants implements Store.
func (s *SQL) ListGrants(ctx context.Context, project string) ([]string, error) {
	rows, err := s.query(ctx, "SELECT type FROM project_grants WHERE project = ? ORDER BY type", project)
	if err != nil {
		return nil, fmt.Errorf("list the grants of project %s: %w", project, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// PutGrant implements Store.
func (s *SQL) PutGrant(ctx context.Context, project, typ string) error {
	return s.InTx(ctx, func(tx Store) error {
		t := tx.(*SQL)
		// Delete then insert: granting twice is not an error, in either dialect.
		if _, err := t.exec(ctx, "DELETE FROM project_grants WHERE project = ? AND type = ?", project, typ); err != nil {
			return fmt.Errorf("grant %s to project %s: %w", typ, project, err)
		}
		if _, err := t.exec(ctx, "INSERT INTO project_grants (project, type) VALUES (?, ?)", project, typ); err != nil {
			return fmt.Errorf("grant %s to project %s: %w", typ, project, err)
		}
		return nil
	})
}

// DeleteGrant implements Store.
func (s *SQL) DeleteGrant(ctx context.Context, project, typ string) error {
	if _, err := s.exec(ctx, "DELETE FROM project_grants WHERE project = ? AND type = ?", project, typ); err != nil {
		return fmt.Errorf("revoke %s from project %s: %w", typ, project, err)
	}
	return nil
}
