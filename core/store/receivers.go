package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/grovehq/grove/core/model"
)

const receiverCols = "id, name, type, cluster_id, action, actor, params, channel, hash, usr, project, domain, created_at, updated_at"

func scanReceiver(r scanner) (*model.Receiver, error) {
	v := &model.Receiver{}
	var actor, params, channel string
	var created int64
	var updated sql.NullInt64
	if err := r.Scan(&v.ID, &v.Name, &v.Type, &v.ClusterID, &v.Action, &actor, &params, &channel, &v.Hash,
		&v.User, &v.Project, &v.Domain, &created, &updated); err != nil {
		return nil, err
	}
	v.Actor, v.Params, v.Channel = fromJSON(actor), fromJSON(params), fromJSON(channel)
	v.CreatedAt, v.UpdatedAt = fromUS(created), fromUSPtr(updated)
	return v, nil
}

// CreateReceiver implements Store.
func (s *SQL) CreateReceiver(ctx context.Context, v *model.Receiver) error {
	_, err := s.exec(ctx, "INSERT INTO receivers ("+receiverCols+") VALUES ("+placeholders(14)+")",
		v.ID, v.Name, v.Type, v.ClusterID, v.Action, toJSON(v.Actor), toJSON(v.Params), toJSON(v.Channel), v.Hash,
		v.User, v.Project, v.Domain, us(v.CreatedAt), usPtr(v.UpdatedAt))
	if err != nil {
		return fmt.Errorf("create receiver %s: %w", v.Name, err)
	}
	return nil
}

// GetReceiver implements Store.
func (s *SQL) GetReceiver(ctx context.Context, id string) (*model.Receiver, error) {
	return getOne(ctx, s, "receiver", "SELECT "+receiverCols+" FROM receivers WHERE id = ?", scanReceiver, id)
}

// FindReceiver implements Store.
func (s *SQL) FindReceiver(ctx context.Context, project, ident string) (v *model.Receiver, err error) {
	err = s.find(ctx, "receiver", "receivers", project, ident, func(id string) error { v, err = s.GetReceiver(ctx, id); return err })
	return v, err
}

// ReceiverByHash implements Store.
func (s *SQL) ReceiverByHash(ctx context.Context, hash string) (*model.Receiver, error) {
	v, err := scanReceiver(s.queryRow(ctx, "SELECT "+receiverCols+" FROM receivers WHERE hash = ?", hash))
	if errors.Is(err, sql.ErrNoRows) {
		// The hash is not named: it is derived from a secret.
		return nil, &NotFoundError{Kind: "webhook", Ident: "(by secret)"}
	}
	if err != nil {
		return nil, fmt.Errorf("look up a webhook: %w", err)
	}
	return v, nil
}

// ListReceivers implements Store. Receivers are listed by name unless a
// sort is given, as Senlin does.
func (s *SQL) ListReceivers(ctx context.Context, o ListOpts) ([]*model.Receiver, error) {
	var out []*model.Receiver
	err := s.list(ctx, "receivers", receiverCols, o, []string{"name"}, func(r scanner) (string, error) {
		v, err := scanReceiver(r)
		if err != nil {
			return "", err
		}
		out = append(out, v)
		return v.ID, nil
	})
	return out, err
}

// UpdateReceiver implements Store: name, action, params and updated_at
// change; the secret and the cluster never do.
func (s *SQL) UpdateReceiver(ctx context.Context, v *model.Receiver) error {
	res, err := s.exec(ctx, "UPDATE receivers SET name = ?, action = ?, params = ?, channel = ?, updated_at = ? WHERE id = ?",
		v.Name, v.Action, toJSON(v.Params), toJSON(v.Channel), usPtr(v.UpdatedAt), v.ID)
	if err != nil {
		return fmt.Errorf("update receiver %s: %w", v.Name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return &NotFoundError{Kind: "receiver", Ident: v.ID}
	}
	return nil
}

// DeleteReceiver implements Store.
func (s *SQL) DeleteReceiver(ctx context.Context, id string) error {
	res, err := s.exec(ctx, "DELETE FROM receivers WHERE id = ?", id)
	if err != nil {
		return fmt.Errorf("delete receiver %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return &NotFoundError{Kind: "receiver", Ident: id}
	}
	return nil
}
