package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/core/store/sqlite"
	"github.com/grovehq/grove/core/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "grove.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestWAL(t *testing.T) {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "grove.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mode string
	if err := s.DB().QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
}

// TestWriterSettings: the writer keeps statement journals in memory and
// checkpoints the WAL in large steps (open's comments say why; a create
// of 10,000 nodes ran about 14% faster with both). The settings are the
// connection's, so they are read back from the pool's one connection.
func TestWriterSettings(t *testing.T) {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "grove.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for pragma, want := range map[string]int{"temp_store": 2, "wal_autocheckpoint": 4000, "synchronous": 1} {
		var got int
		if err := s.DB().QueryRow("PRAGMA " + pragma).Scan(&got); err != nil || got != want {
			t.Errorf("PRAGMA %s = %d, %v; want %d", pragma, got, err, want)
		}
	}
}

// TestNewStoreIsPrivate: the store holds every object's spec and metadata,
// so its directory and files are the agent user's alone.
func TestNewStoreIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "dir")
	path := filepath.Join(dir, "grove.db")
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A write makes sure the -wal and -shm files exist.
	if err := s.CreateProfile(context.Background(), &model.Profile{ID: "0f000000-0000-4000-8000-000000000001", Name: "p", Project: "p1"}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700, filepath.Dir(dir): 0o700, path: 0o600, path + "-wal": 0o600, path + "-shm": 0o600} {
		info, err := os.Stat(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s has mode %o, want %o", p, got, want)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".new-") {
			t.Errorf("the temporary file %s was left behind", e.Name())
		}
	}
	if v, want := s.SchemaVersion(), store.LatestSchemaVersion(); v != want {
		t.Errorf("schema version %d, want %d", v, want)
	}
}

// TestRefusesFilesThatAreNotGroves: only where no file exists is a store
// created. Before, SQLite took a 0-byte or foreign file as a new database and
// the agent started on an empty store, orphaning every running node.
func TestRefusesFilesThatAreNotGroves(t *testing.T) {
	ctx := context.Background()
	// A real store with enough rows to span many pages, closed cleanly.
	good := filepath.Join(t.TempDir(), "good.db")
	s, err := sqlite.Open(ctx, good)
	if err != nil {
		t.Fatal(err)
	}
	var events []*model.Event
	for i := range 2000 {
		events = append(events, &model.Event{ID: fmt.Sprintf("e%05d", i), Timestamp: time.Unix(int64(i), 0), OID: "o", OName: strings.Repeat("x", 200), Project: "p1"})
	}
	if err := s.CreateEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	s.Close()
	whole, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(good + "-wal"); err == nil {
		t.Fatal("the write-ahead log outlived the store's close; the truncation case would not test the header check")
	}
	sqliteFile := func(t *testing.T, path string, stmts ...string) {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range stmts {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name  string
		write func(t *testing.T, path string)
		why   string
	}{
		{"empty", func(t *testing.T, path string) { os.WriteFile(path, nil, 0o600) }, "is empty (0 bytes)"},
		{"text", func(t *testing.T, path string) {
			os.WriteFile(path, []byte("not a database at all, but long enough to hold a header..........................................."), 0o600)
		}, "is not a SQLite database"},
		{"header cut", func(t *testing.T, path string) { os.WriteFile(path, whole[:40], 0o600) }, "is truncated (40 bytes)"},
		{"truncated", func(t *testing.T, path string) { os.WriteFile(path, whole[:len(whole)/2], 0o600) }, "is truncated"},
		{"foreign", func(t *testing.T, path string) {
			sqliteFile(t, path, "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)", "INSERT INTO invoices VALUES (1, 9.5)")
		}, "holds tables (invoices) but no Grove schema"},
		{"no tables", func(t *testing.T, path string) {
			sqliteFile(t, path, "CREATE TABLE x (a INTEGER)", "DROP TABLE x")
		}, "is an empty database, not a Grove store"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "grove.db")
			tc.write(t, path)
			before, _ := os.ReadFile(path)
			s, err := sqlite.Open(ctx, path)
			if err == nil {
				s.Close()
				t.Fatal("opened; want refused")
			}
			if !errors.Is(err, store.ErrNotGrove) {
				t.Errorf("error does not wrap store.ErrNotGrove: %v", err)
			}
			for _, want := range []string{path, tc.why, "restore", "backup"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Errorf("the refused file was changed (%d bytes, now %d)", len(before), len(after))
			}
		})
	}
}

// TestDamagedFileIsAnError: a file with a valid header and garbage pages is
// an error naming the file, not a panic and not a new store.
func TestDamagedFileIsAnError(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "grove.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 100; i < len(b); i++ {
		b[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err = sqlite.Open(ctx, path)
	if err == nil {
		s.Close()
		t.Fatal("opened a damaged file")
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "backup") {
		t.Errorf("error %q does not name the file and the remedy", err)
	}
}

// TestUpgradeFromLegacySchema: a store written before the migrations moved to
// goose keeps working; its versions move into goose's table once.
func TestUpgradeFromLegacySchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "grove.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	storetest.WriteLegacy(t, db)
	db.Close()
	for range 2 {
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		storetest.CheckUpgraded(t, s)
		s.Close()
	}
}

// TestLeftoverTemporaryFile: a crash while a store is created leaves at most
// a temporary file, which does not stop the next start.
func TestLeftoverTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "grove.db")
	if err := os.WriteFile(path+".new-123", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}
