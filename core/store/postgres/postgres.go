// Package postgres opens Grove's shared store on PostgreSQL through pgx.
// Several agents on one database share the work.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/grovehq/grove/core/store"
)

// uniqueViolation is PostgreSQL's SQLSTATE for a unique-constraint failure.
const uniqueViolation = "23505"

// Open connects with a pgx DSN such as
// "host=/tmp/pg port=5432 user=grove dbname=grove sslmode=disable" and
// migrates the database. An empty database gets Grove's schema; one holding
// other tables but no Grove schema is refused with store.ErrNotGrove. Agents
// opening one database at once migrate it one after the other.
func Open(ctx context.Context, dsn string) (*store.SQL, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres store: the DSN is not valid: %w", err)
	}
	where := fmt.Sprintf("PostgreSQL database %q on %s:%d", cfg.Database, cfg.Host, cfg.Port)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres store %s: %w", where, err)
	}
	// One pool serves the engine's writes and the API's reads: under
	// PostgreSQL's MVCC a read never waits for a write transaction, so the
	// store needs no separate read pool (its Reads is the store itself).
	db.SetMaxOpenConns(16)
	// database/sql keeps two idle connections unless told otherwise, and
	// closes the rest as they come back: with four node workers, the
	// lease loop and the API sharing the pool, most transactions opened a
	// new connection, and PostgreSQL spent more CPU starting backends and
	// filling their catalog caches than on the statements.
	db.SetMaxIdleConns(16)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to %s: %w", where, err)
	}
	s, err := store.NewSQL(ctx, db, store.Backend{Dialect: "postgres", Location: where, IsUniqueViolation: isUnique, MayBeEmpty: true})
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func isUnique(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == uniqueViolation
}
