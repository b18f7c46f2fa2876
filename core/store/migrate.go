package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/*.sql
var migrations embed.FS

// versionTable records the applied schema versions (goose's table layout).
const versionTable = "grove_schema_version"

// legacyTable is where Grove before goose recorded its versions.
const legacyTable = "schema_migrations"

// migrationLock keys the PostgreSQL advisory lock that serialises the
// migrations of agents starting together on one database: the adoption step
// takes it for its transaction, goose's session locker for the whole run.
const migrationLock int64 = 0x67726f7665 // "grove"

func (s *SQL) gooseDialect() goose.Dialect {
	if s.dialect == "postgres" {
		return goose.DialectPostgres
	}
	return goose.DialectSQLite3
}

// migrate brings the schema to the newest version and records which one it
// is. adopt runs first so that goose only ever sees a database that is empty
// or already carries Grove's version table.
func (s *SQL) migrate(ctx context.Context) error {
	if err := s.adopt(ctx); err != nil {
		return err
	}
	files, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	opts := []goose.ProviderOption{
		goose.WithExcludeNames(s.otherDialects()),
		goose.WithTableName(versionTable),
		goose.WithDisableGlobalRegistry(true),
		goose.WithLogger(goose.NopLogger()),
	}
	if s.dialect == "postgres" {
		// Probe every second (goose's default is five) for up to ten
		// minutes: agents starting together wait for the first one's
		// migrations, which take well under a second on an empty database.
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(migrationLock), lock.WithLockTimeout(1, 600))
		if err != nil {
			return err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(s.gooseDialect(), s.db, files, opts...)
	if err != nil {
		return err
	}
	known := p.ListSources()
	newest := known[len(known)-1].Version
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		return err
	}
	if current > newest {
		return fmt.Errorf("%s has schema version %d, newer than this Grove knows (%d): %w; run the Grove version that wrote it, or a newer one",
			s.location, current, newest, ErrNotGrove)
	}
	if _, err := p.Up(ctx); err != nil {
		return err
	}
	if s.version, err = p.GetDBVersion(ctx); err != nil {
		return err
	}
	return nil
}

// adopt decides, in one transaction, whether the database is Grove's:
//   - it has Grove's version table: nothing to do;
//   - it was written by Grove before goose (schema_migrations beside Grove's
//     tables): its versions move into the version table, once;
//   - it is empty and may be (Backend.MayBeEmpty): the version table is
//     created, and goose creates the rest;
//   - it holds anything else: it is refused, because migrating it would mix
//     Grove's tables into someone else's database.
func (s *SQL) adopt(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if s.dialect == "postgres" {
		// Blocks until no other agent adopts or migrates this database.
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLock); err != nil {
			return fmt.Errorf("lock the schema for migration: %w", err)
		}
	}
	tables, err := s.tables(ctx, tx)
	if err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	has := func(name string) bool { return slices.Contains(tables, name) }
	versions, err := database.NewStore(s.gooseDialect(), versionTable)
	if err != nil {
		return err
	}
	switch {
	case has(versionTable):
		return nil
	case has(legacyTable) && has("profiles") && has("clusters"):
		var legacy []int64
		rows, err := tx.QueryContext(ctx, "SELECT version FROM "+legacyTable+" ORDER BY version")
		if err != nil {
			return fmt.Errorf("read %s: %w", legacyTable, err)
		}
		for rows.Next() {
			var v int64
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return err
			}
			legacy = append(legacy, v)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if err := createVersionTable(ctx, tx, versions); err != nil {
			return err
		}
		for _, v := range legacy {
			if err := versions.Insert(ctx, tx, database.InsertRequest{Version: v}); err != nil {
				return fmt.Errorf("record schema version %d: %w", v, err)
			}
		}
		if _, err := tx.ExecContext(ctx, "DROP TABLE "+legacyTable); err != nil {
			return fmt.Errorf("drop %s: %w", legacyTable, err)
		}
	case len(tables) > 0:
		if len(tables) > 5 {
			tables = append(tables[:5], "...")
		}
		return fmt.Errorf("%s holds tables (%s) but no Grove schema: %w. Point the store at Grove's own database or at an empty one; "+
			"if this was Grove's store, restore it from a backup", s.location, strings.Join(tables, ", "), ErrNotGrove)
	case !s.empty:
		return fmt.Errorf("%s is an empty database, not a Grove store: %w. Grove creates a store only where none exists, "+
			"so that a lost store is never silently replaced by an empty one; restore the store from a backup", s.location, ErrNotGrove)
	default:
		if err := createVersionTable(ctx, tx, versions); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// createVersionTable creates the version table as goose does, with the
// version 0 row goose expects.
func createVersionTable(ctx context.Context, tx *sql.Tx, versions database.Store) error {
	if err := versions.CreateVersionTable(ctx, tx); err != nil {
		return fmt.Errorf("create %s: %w", versionTable, err)
	}
	if err := versions.Insert(ctx, tx, database.InsertRequest{Version: 0}); err != nil {
		return fmt.Errorf("record schema version 0: %w", err)
	}
	return nil
}

// tables lists the user tables and views of the database (PostgreSQL: of the
// current schema), sorted.
func (s *SQL) tables(ctx context.Context, tx *sql.Tx) ([]string, error) {
	q := `SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND substr(name, 1, 7) <> 'sqlite_' ORDER BY name`
	if s.dialect == "postgres" {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name`
	}
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, rows.Err()
}

// A migration that SQLite and PostgreSQL write differently comes as two
// files of one version, NNNN_name.sqlite.sql and NNNN_name.postgres.sql;
// each dialect runs its own and never sees the other's.
var dialectSuffixes = map[string]string{"sqlite": ".sqlite.sql", "postgres": ".postgres.sql"}

// otherDialects names the migration files written for the dialects other
// than the store's.
func (s *SQL) otherDialects() []string {
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		panic("grove store: the embedded migrations cannot be listed: " + err.Error())
	}
	var out []string
	for _, f := range files {
		for d, suffix := range dialectSuffixes {
			if d != s.dialect && strings.HasSuffix(f, suffix) {
				out = append(out, path.Base(f))
			}
		}
	}
	return out
}

// LatestSchemaVersion is the newest schema version this build migrates to:
// the number of its migrations, which are numbered from 1 without gaps (a
// version written per dialect counts once).
func LatestSchemaVersion() int64 {
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		panic("grove store: the embedded migrations cannot be listed: " + err.Error())
	}
	versions := map[string]bool{}
	for _, f := range files {
		v, _, _ := strings.Cut(path.Base(f), "_")
		versions[v] = true
	}
	return int64(len(versions))
}

// SchemaVersion is the schema version the store was migrated to when opened.
func (s *SQL) SchemaVersion() int64 { return s.version }

// Location names the database: a file path, or a PostgreSQL host and
// database. It never holds a password.
func (s *SQL) Location() string { return s.location }
