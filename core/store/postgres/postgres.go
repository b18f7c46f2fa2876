// Package postgres opens Grove's shared store on PostgreSQL through pgx.
// Several agents on one database share the work.
package postgres

import (
	"context"
	"database/sql"
	"fmt"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/grovehq/grove/core/store"
)

// Open connects with a pgx DSN such as
// "host=/tmp/pg port=5432 user=grove dbname=grove sslmode=disable".
func Open(ctx context.Context, dsn string) (*store.SQL, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	db.SetMaxOpenConns(16)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	s, err := store.NewSQL(ctx, db, "postgres")
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}
