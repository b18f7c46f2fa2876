package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// SetObject records that a definition set owns an object.
type SetObject struct {
	// Project is the project of the set (and of the object).
	Project string
	Set     string
	Kind    string // profile, policy or cluster
	Name    string // the name the set gives it
	ID      string
}

// SetObjects lists what a project's set owns, by kind and name.
func (s *SQL) SetObjects(ctx context.Context, project, set string) ([]SetObject, error) {
	rows, err := s.query(ctx, "SELECT project, set_name, kind, name, object_id FROM set_objects WHERE project = ? AND set_name = ? ORDER BY kind, name", project, set)
	if err != nil {
		return nil, fmt.Errorf("list set %s: %w", set, err)
	}
	defer rows.Close()
	var out []SetObject
	for rows.Next() {
		var o SetObject
		if err := rows.Scan(&o.Project, &o.Set, &o.Kind, &o.Name, &o.ID); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// OwnerOf returns the set owning an object, or nil.
func (s *SQL) OwnerOf(ctx context.Context, kind, id string) (*SetObject, error) {
	var o SetObject
	err := s.queryRow(ctx, "SELECT project, set_name, kind, name, object_id FROM set_objects WHERE kind = ? AND object_id = ?", kind, id).
		Scan(&o.Project, &o.Set, &o.Kind, &o.Name, &o.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &o, nil
}

// PutSetObject records ownership, replacing the object's previous record.
func (s *SQL) PutSetObject(ctx context.Context, o SetObject) error {
	return s.InTx(ctx, func(tx Store) error {
		t := tx.(*SQL)
		if _, err := t.exec(ctx, "DELETE FROM set_objects WHERE kind = ? AND object_id = ?", o.Kind, o.ID); err != nil {
			return err
		}
		_, err := t.exec(ctx, "INSERT INTO set_objects (project, set_name, kind, name, object_id) VALUES (?, ?, ?, ?, ?)", o.Project, o.Set, o.Kind, o.Name, o.ID)
		return err
	})
}

// DeleteSetObject forgets an object's owner.
func (s *SQL) DeleteSetObject(ctx context.Context, kind, id string) error {
	_, err := s.exec(ctx, "DELETE FROM set_objects WHERE kind = ? AND object_id = ?", kind, id)
	return err
}
