// Package sqlite opens Grove's embedded store: SQLite in WAL mode through the
// pure-Go modernc.org/sqlite driver.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/grovehq/grove/core/store"
)

// Open opens (creating if needed) the store at path.
func Open(ctx context.Context, path string) (*store.SQL, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create store directory: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	// SQLite has one writer at a time; one connection makes that explicit and
	// avoids lock upgrades failing under load.
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	s, err := store.NewSQL(ctx, db, "sqlite")
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}
