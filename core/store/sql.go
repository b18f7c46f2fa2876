package store

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations/*.sql
var migrations embed.FS

// SQL is the Store over database/sql, shared by SQLite and PostgreSQL. SQL is
// written with ? placeholders and rebound to $n for PostgreSQL.
type SQL struct {
	db      *sql.DB
	q       querier
	dialect string
	inTx    bool
}

type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// NewSQL wraps an open database and applies the embedded migrations.
func NewSQL(ctx context.Context, db *sql.DB, dialect string) (*SQL, error) {
	s := &SQL{db: db, q: db, dialect: dialect}
	if err := s.migrate(ctx); err != nil {
		return nil, fmt.Errorf("migrate %s store: %w", dialect, err)
	}
	return s, nil
}

func (s *SQL) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)`); err != nil {
		return err
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		version, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(name, "migrations/"), "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migration %s: file name must start with a number", name)
		}
		err = s.InTx(ctx, func(tx Store) error {
			t := tx.(*SQL)
			var n int
			if err := t.q.QueryRowContext(ctx, t.rebind(`SELECT COUNT(*) FROM schema_migrations WHERE version = ?`), version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			body, err := migrations.ReadFile(name)
			if err != nil {
				return err
			}
			for _, stmt := range splitStatements(string(body)) {
				if _, err := t.q.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
			}
			_, err = t.q.ExecContext(ctx, t.rebind(`INSERT INTO schema_migrations (version) VALUES (?)`), version)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

var commentRE = regexp.MustCompile(`(?m)^\s*--.*$`)

func splitStatements(body string) []string {
	var out []string
	for _, stmt := range strings.Split(commentRE.ReplaceAllString(body, ""), ";") {
		if s := strings.TrimSpace(stmt); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Dialect implements Store.
func (s *SQL) Dialect() string { return s.dialect }

// Close implements Store.
func (s *SQL) Close() error { return s.db.Close() }

// DB exposes the database for tests and benchmarks.
func (s *SQL) DB() *sql.DB { return s.db }

// InTx implements Store.
func (s *SQL) InTx(ctx context.Context, fn func(tx Store) error) error {
	if s.inTx {
		return fn(s)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	if err := fn(&SQL{db: s.db, q: tx, dialect: s.dialect, inTx: true}); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func (s *SQL) rebind(q string) string {
	if s.dialect != "postgres" {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (s *SQL) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return s.q.ExecContext(ctx, s.rebind(q), args...)
}

func (s *SQL) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return s.q.QueryContext(ctx, s.rebind(q), args...)
}

// insertMany inserts rows in chunks of multi-row INSERTs: one statement per
// few hundred rows is what makes a 10,000-node cluster cheap to write.
func (s *SQL) insertMany(ctx context.Context, table, cols string, n int, args func(i int) []any) error {
	ncols := strings.Count(cols, ",") + 1
	chunk := 8000 / ncols
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", ncols), ",") + ")"
	for start := 0; start < n; start += chunk {
		end := min(start+chunk, n)
		var b strings.Builder
		b.WriteString("INSERT INTO " + table + " (" + cols + ") VALUES ")
		all := make([]any, 0, (end-start)*ncols)
		for i := start; i < end; i++ {
			if i > start {
				b.WriteByte(',')
			}
			b.WriteString(row)
			all = append(all, args(i)...)
		}
		if _, err := s.exec(ctx, b.String(), all...); err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
	}
	return nil
}

func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

func anys(ids []string) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// --- value helpers

func toJSON(m map[string]any) string {
	if m == nil {
		return "{}"
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "{}"
	}
	return string(b)
}

func fromJSON(s string) map[string]any {
	m := map[string]any{}
	_ = json.Unmarshal([]byte(s), &m)
	return m
}

func us(t time.Time) int64 { return t.UnixMicro() }

func usPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

func fromUS(v int64) time.Time { return time.UnixMicro(v).UTC() }

func fromUSPtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromUS(v.Int64)
	return &t
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

type scanner interface{ Scan(dest ...any) error }

// --- find and list

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// find implements Senlin's lookup: a UUID-shaped ident is tried as id then
// name; anything else as name, then as an id prefix. Several matches are an
// AmbiguousError.
func (s *SQL) find(ctx context.Context, kind, table, project, ident string, get func(id string) error) error {
	ids := func(where string, arg string) ([]string, error) {
		q := "SELECT id FROM " + table + " WHERE " + where
		args := []any{arg}
		if project != "" {
			q += " AND project = ?"
			args = append(args, project)
		}
		rows, err := s.query(ctx, q+" LIMIT 2", args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return nil, err
			}
			out = append(out, id)
		}
		return out, rows.Err()
	}
	try := []struct{ where, arg string }{}
	if uuidRE.MatchString(ident) {
		try = append(try, struct{ where, arg string }{"id = ?", ident}, struct{ where, arg string }{"name = ?", ident})
	} else {
		try = append(try, struct{ where, arg string }{"name = ?", ident}, struct{ where, arg string }{"id LIKE ?", strings.NewReplacer("%", "", "_", "").Replace(ident) + "%"})
	}
	for _, t := range try {
		found, err := ids(t.where, t.arg)
		if err != nil {
			return fmt.Errorf("find %s %q: %w", kind, ident, err)
		}
		if len(found) > 1 {
			return &AmbiguousError{Kind: kind, Ident: ident}
		}
		if len(found) == 1 {
			return get(found[0])
		}
	}
	return &NotFoundError{Kind: kind, Ident: ident}
}

// columns maps the API's filter and sort names to columns.
var columns = map[string]string{
	"index": "idx", "user": "usr", "timestamp": "ts", "oid": "oid", "oname": "oname", "otype": "otype",
}

func column(k string) string {
	if c, ok := columns[k]; ok {
		return c
	}
	return k
}

// list builds WHERE/ORDER/LIMIT from ListOpts. Markers are resolved by
// skipping past the marker id in the ordered result, which keeps pagination
// correct for any sort key.
func (s *SQL) list(ctx context.Context, table, cols string, o ListOpts, defaultSort []string, scan func(scanner) (string, error)) error {
	var where []string
	var args []any
	if o.Project != "" {
		where = append(where, "project = ?")
		args = append(args, o.Project)
	}
	keys := make([]string, 0, len(o.Filters))
	for k := range o.Filters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vals := o.Filters[k]
		if len(vals) == 0 {
			continue
		}
		where = append(where, column(k)+" IN ("+placeholders(len(vals))+")")
		for _, v := range vals {
			args = append(args, v)
		}
	}
	q := "SELECT " + cols + " FROM " + table
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	var order []string
	for _, k := range o.Sort {
		dir := " ASC"
		if k.Desc {
			dir = " DESC"
		}
		order = append(order, column(k.Key)+dir)
	}
	if len(order) == 0 {
		for _, k := range defaultSort {
			order = append(order, k+" ASC")
		}
	}
	order = append(order, "id ASC")
	q += " ORDER BY " + strings.Join(order, ", ")
	if o.Limit > 0 && o.Marker == "" {
		q += " LIMIT " + strconv.Itoa(o.Limit)
	}
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("list %s: %w", table, err)
	}
	defer rows.Close()
	seenMarker := o.Marker == ""
	n := 0
	for rows.Next() {
		if o.Limit > 0 && n >= o.Limit {
			break
		}
		if !seenMarker {
			id, err := scanID(rows)
			if err != nil {
				return err
			}
			if id == o.Marker {
				seenMarker = true
			}
			continue
		}
		if _, err := scan(rows); err != nil {
			return err
		}
		n++
	}
	return rows.Err()
}

// scanID scans a row only to learn its id (the first column).
func scanID(rows *sql.Rows) (string, error) {
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	dest := make([]any, len(cols))
	var id string
	dest[0] = &id
	for i := 1; i < len(dest); i++ {
		dest[i] = new(any)
	}
	if err := rows.Scan(dest...); err != nil {
		return "", err
	}
	return id, nil
}
