// Package sqlite opens Grove's embedded store: SQLite in WAL mode through the
// pure-Go modernc.org/sqlite driver.
package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"

	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/grovehq/grove/core/store"
)

// Open opens the store at path. Only where no file exists is a new store
// created (mode 0600, in a directory created 0700): an empty, truncated or
// foreign file is refused with an error wrapping store.ErrNotGrove, because
// starting afresh over a lost store would orphan the nodes it tracked.
func Open(ctx context.Context, path string) (*store.SQL, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create store directory: %w", err)
	}
	switch _, err := os.Stat(path); {
	case errors.Is(err, os.ErrNotExist):
		if err := create(ctx, path); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("open SQLite store %s: %w", path, err)
	default:
		if err := checkFile(path); err != nil {
			return nil, err
		}
	}
	return open(ctx, path, false)
}

// create makes a new store at path. The schema is written to a temporary
// file, in rollback-journal mode so that nothing but the file remains once it
// is closed, and the file is then linked into place. A crash at any point
// leaves either no store or a complete one, never an empty file that the next
// start would have to refuse.
func create(ctx context.Context, path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*")
	if err != nil {
		return fmt.Errorf("create SQLite store %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	// CreateTemp makes the file 0600; SQLite gives its -wal and -shm files
	// the database file's mode.
	if err := f.Close(); err != nil {
		return fmt.Errorf("create SQLite store %s: %w", path, err)
	}
	s, err := open(ctx, tmp, true)
	if err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return fmt.Errorf("create SQLite store %s: %w", path, err)
	}
	if err := syncFile(tmp); err != nil {
		return fmt.Errorf("create SQLite store %s: %w", path, err)
	}
	// Link, unlike rename, never replaces a file: if another process created
	// the store meanwhile, that one is used.
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create SQLite store %s: %w", path, err)
	}
	return syncFile(filepath.Dir(path))
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// open opens path and migrates it. A new store (fresh) stays in SQLite's
// default rollback-journal mode; every other is switched to WAL, but only once
// it is known to be Grove's, so that a refused file is left as it was.
func open(ctx context.Context, path string, fresh bool) (*store.SQL, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	// A statement that changes many rows inside a transaction (a batch
	// of node or action updates) keeps a statement journal, so that it
	// can be undone alone. SQLite spills one past 64 KiB into a temporary
	// file: a create of 50,000 nodes spent 5% of the agent's CPU writing
	// them. In memory they cost a copy, bounded by the pages one
	// statement changes; the writer's sorts, which the plan tests keep off
	// the hot paths, are held in memory too.
	q.Add("_pragma", "temp_store(MEMORY)")
	// The writer copies the WAL back into the database every
	// walCheckpointPages pages instead of SQLite's 1,000: a create changes
	// the same node and action pages several times within a second, and a
	// page is copied once per checkpoint however often it changed. The
	// cost is a WAL file of up to about 16 MB (it keeps its largest size).
	q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walCheckpointPages))
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open SQLite store %s: %w", path, err)
	}
	// SQLite has one writer at a time; one connection makes that explicit and
	// avoids lock upgrades failing under load.
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, damaged(path, err)
	}
	s, err := store.NewSQL(ctx, db, store.Backend{Dialect: "sqlite", Location: path, IsUniqueViolation: isUnique, MayBeEmpty: fresh, KeepPrepared: true})
	if err != nil {
		db.Close()
		if errors.Is(err, store.ErrNotGrove) {
			return nil, err
		}
		return nil, damaged(path, err)
	}
	if !fresh {
		// WAL mode is stored in the file, so every later connection has it.
		if _, err := s.DB().ExecContext(ctx, "PRAGMA journal_mode=WAL"); err != nil {
			s.Close()
			return nil, damaged(path, err)
		}
		rdb, err := openReads(ctx, path)
		if err != nil {
			s.Close()
			return nil, damaged(path, err)
		}
		s.SetReadPool(rdb)
	}
	return s, nil
}

// walCheckpointPages is how many pages the WAL holds before the writer
// checkpoints it (open).
const walCheckpointPages = 4000

// readConns is how many read-only connections serve the API's reads.
const readConns = 4

// openReads opens the pool the API's reads use beside the one writer. In
// WAL mode a reader sees the last committed state and neither waits for
// the writer nor makes it wait (except for a checkpoint, which only
// reaches as far as the oldest open read), so a client polling a large
// cluster does not slow its creation. The connections are read-only
// twice over: opened with mode=ro and query_only, so a write sent through
// them by mistake fails instead of taking the write lock.
func openReads(ctx context.Context, path string) (*sql.DB, error) {
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "query_only(1)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(readConns)
	db.SetMaxIdleConns(readConns)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// damaged explains a failure to read an existing store file.
func damaged(path string, err error) error {
	return fmt.Errorf("open SQLite store %s: %w; if the file is damaged, stop every process using it and restore it from a backup", path, err)
}

func isUnique(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

// header is what every SQLite database file starts with.
var header = []byte("SQLite format 3\x00")

// checkFile refuses a file that cannot be a complete SQLite database, before
// SQLite opens it: SQLite would treat an empty file as a new database, and
// reads a truncated one until it meets the missing pages.
func checkFile(path string) error {
	refuse := func(why string) error {
		return fmt.Errorf("the store file %s %s: %w. Grove creates a store only where no file exists, so that a lost store is never "+
			"silently replaced by an empty one, orphaning the nodes it tracked; restore the file from a backup, or point the agent "+
			"at another data dir", path, why, store.ErrNotGrove)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open SQLite store %s: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("open SQLite store %s: %w", path, err)
	}
	if info.IsDir() {
		return refuse("is a directory")
	}
	if info.Size() == 0 {
		return refuse("is empty (0 bytes)")
	}
	// The header is the first 100 bytes; see https://www.sqlite.org/fileformat.html.
	h := make([]byte, 100)
	n, err := io.ReadFull(f, h)
	if err != nil {
		if got := h[:n]; bytes.HasPrefix(got, header) || bytes.HasPrefix(header, got) {
			return refuse(fmt.Sprintf("is truncated (%d bytes)", info.Size()))
		}
		return refuse("is not a SQLite database")
	}
	if !bytes.Equal(h[:16], header) {
		return refuse("is not a SQLite database")
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	// The page count in the header is valid only when the change counter
	// matches the version-valid-for number, and the file is authoritative
	// only when no write-ahead log holds newer pages.
	valid := bytes.Equal(h[24:28], h[92:96])
	if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
		valid = false
	}
	if valid && pages > 0 && info.Size() < pages*pageSize {
		return refuse(fmt.Sprintf("is truncated: it has %d bytes, its header says %d", info.Size(), pages*pageSize))
	}
	return nil
}
