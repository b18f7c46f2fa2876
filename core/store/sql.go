package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SQL is the Store over database/sql, shared by SQLite and PostgreSQL. SQL is
// written with ? placeholders and rebound to $n for PostgreSQL.
type SQL struct {
	db       *sql.DB
	q        querier
	dialect  string
	location string
	unique   func(error) bool
	empty    bool
	version  int64
	// tx is the transaction a store in one runs in (nil outside one),
	// and txStmts the statements it prepared for itself, by text.
	tx      *sql.Tx
	txStmts map[string]*sql.Stmt
	// generic says the transaction runs with generic plans (batchTx).
	generic bool
	// changed, in a transaction, holds the clusters whose node generation
	// the transaction moves when it commits (bumpNodeChanges).
	changed *[]string
	// inserted, in a transaction of a store with unanalyzed, counts the
	// rows it inserted by table, for analyzeAfter once it commits.
	inserted map[string]int
	// unanalyzed, on PostgreSQL, counts the rows inserted into each table
	// since analyzeAfter last refreshed its statistics; shared by the
	// store and its transactions.
	unanalyzed *insertCounts
	// trace, when set, sees every query the list and claim paths run.
	trace func(query string, args []any)
	// reads is the store over a separate pool of read-only connections
	// (SQLite in WAL mode), or nil where db serves reads as well.
	reads *SQL
	// stmts keeps the statements of the store's pool prepared: the read
	// pool's, and SQLite's writer's (Backend.KeepPrepared).
	stmts *stmtCache
	// columnTypes, on PostgreSQL, holds each table's column types by
	// column, read from the catalog once the schema is migrated
	// (insertArrays); the store and its transactions share it unchanged.
	columnTypes map[string]map[string]string
}

// maxCachedStmts bounds the statements a pool keeps prepared. The API's
// reads are a few dozen query texts and the engine's writes a few dozen
// more; but a list query's text varies with its filters, sorts and limit,
// and a write that names rows by id with their count, so the texts are
// many in principle: past the bound a text is prepared for each use, as
// without a cache. Nothing is evicted: a statement handed out may be about
// to run, and a closed one would fail it.
const maxCachedStmts = 256

// maxCachedText bounds the SQL text of the statements a pool keeps
// prepared, which bounds their memory: SQLite's program for a statement
// takes about 44 times its text (measured: 40 inserts of 250 to 289 nodes,
// 480 KB of text, took 21 MB prepared), so this keeps about 11 MB at most
// while holding the dozen batch statements of a large create.
const maxCachedText = 256 << 10

// stmtCache keeps a pool's statements prepared, by text. SQLite parses and
// plans a statement each time it is prepared: a tenth of the agent's CPU
// in a page of GET /v1/nodes (three queries: the marker, the page, the
// profile's name), and as much in a large create, whose every batch of
// nodes runs the same dozen statements, each of hundreds of values. A
// prepared statement is reset and run again. database/sql prepares a Stmt
// once on each connection that runs it, and a transaction reuses what its
// connection has prepared (Tx.StmtContext).
type stmtCache struct {
	db    *sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
	text  int // the length of the texts in stmts
	// wanted holds the texts that transactions ran unprepared, to prepare
	// once the connection is free again (prepareWanted).
	wanted map[string]bool
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, stmts: map[string]*sql.Stmt{}, wanted: map[string]bool{}}
}

// lookup returns q prepared, or nil.
func (c *stmtCache) lookup(q string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stmts[q]
}

// full reports whether q would pass the cache's bounds.
func (c *stmtCache) full(q string) bool {
	return len(c.stmts) >= maxCachedStmts || c.text+len(q) > maxCachedText
}

// get returns q prepared, preparing it if need be, or nil when the cache
// is full.
func (c *stmtCache) get(ctx context.Context, q string) (*sql.Stmt, error) {
	c.mu.Lock()
	st, full := c.stmts[q], c.full(q)
	c.mu.Unlock()
	if st != nil || full {
		return st, nil
	}
	// Prepared outside the lock: preparing may wait for a connection.
	st, err := c.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return c.keep(q, st), nil
}

// want notes q, run unprepared in a transaction, for prepareWanted. The
// transaction cannot prepare a statement for the pool: SQLite's writer
// pool has one connection, which the transaction holds.
func (c *stmtCache) want(q string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.full(q) && len(c.wanted) < maxCachedStmts {
		c.wanted[q] = true
	}
}

// prepareWanted prepares what transactions asked for, once they are over.
// A text that fails to prepare is left to run unprepared.
func (c *stmtCache) prepareWanted(ctx context.Context) {
	c.mu.Lock()
	var qs []string
	for q := range c.wanted {
		if _, ok := c.stmts[q]; !ok {
			qs = append(qs, q)
		}
	}
	clear(c.wanted)
	c.mu.Unlock()
	for _, q := range qs {
		if st, err := c.db.PrepareContext(ctx, q); err == nil {
			c.keep(q, st)
		}
	}
}

// keep adds st as q and returns the statement to use for q: st, one
// another caller kept first, or nil (st closed) when the cache is full.
func (c *stmtCache) keep(q string, st *sql.Stmt) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if had, ok := c.stmts[q]; ok {
		_ = st.Close()
		return had
	}
	if c.full(q) {
		_ = st.Close()
		return nil
	}
	c.stmts[q] = st
	c.text += len(q)
	return st
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.stmts {
		_ = st.Close()
		delete(c.stmts, q)
	}
	c.text = 0
}

type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Backend describes the database under a SQL store.
type Backend struct {
	// Dialect is "sqlite" or "postgres".
	Dialect string
	// Location names the database in messages and logs: a file path, or a
	// PostgreSQL host and database; never a password.
	Location string
	// IsUniqueViolation reports whether err is the driver's unique-constraint
	// failure; the store turns it into a DuplicateError.
	IsUniqueViolation func(error) bool
	// MayBeEmpty lets NewSQL create the schema in a database without tables;
	// otherwise such a database is refused as not Grove's. A SQLite store
	// sets it only for a file it has just created itself.
	MayBeEmpty bool
	// KeepPrepared has the store keep its statements prepared (SQLite's
	// driver parses each statement it is given; PostgreSQL's keeps its
	// own cache).
	KeepPrepared bool
}

// NewSQL wraps an open database and migrates it to the newest schema. It
// refuses (with ErrNotGrove) a database that holds tables but no Grove schema.
func NewSQL(ctx context.Context, db *sql.DB, b Backend) (*SQL, error) {
	s := &SQL{db: db, q: db, dialect: b.Dialect, location: b.Location, unique: b.IsUniqueViolation, empty: b.MayBeEmpty}
	if s.unique == nil {
		s.unique = func(error) bool { return false }
	}
	if s.dialect == "postgres" {
		s.unanalyzed = newInsertCounts()
	}
	if err := s.migrate(ctx); err != nil {
		return nil, fmt.Errorf("migrate %s store %s: %w", b.Dialect, b.Location, err)
	}
	if s.dialect == "postgres" {
		types, err := s.readColumnTypes(ctx)
		if err != nil {
			return nil, fmt.Errorf("open %s store %s: %w", b.Dialect, b.Location, err)
		}
		s.columnTypes = types
	}
	if b.KeepPrepared {
		s.stmts = newStmtCache(db)
	}
	return s, nil
}

// Dialect implements Store.
func (s *SQL) Dialect() string { return s.dialect }

// Close implements Store. Closing a nil store does nothing, so a failed open
// held in a Store interface cannot panic on cleanup.
func (s *SQL) Close() error {
	if s == nil || s.db == nil {
		return nil
	}
	if s.reads != nil {
		s.reads.stmts.close()
		_ = s.reads.db.Close()
	}
	if s.stmts != nil {
		s.stmts.close()
	}
	return s.db.Close()
}

// SetReadPool has the store's Reads use db, a pool of read-only
// connections to the same database; the store closes it with its own.
func (s *SQL) SetReadPool(db *sql.DB) {
	r := *s
	r.db, r.q, r.tx, r.reads = db, db, nil, nil
	r.stmts = newStmtCache(db)
	s.reads = &r
}

// Reads implements Reader: the store over the read pool, or s itself when
// it has none (PostgreSQL's pool already serves reads beside writes).
// Only top-level reads belong there: a read inside a transaction must use
// the transaction's store to see its own writes.
func (s *SQL) Reads() Store {
	if s.reads == nil || s.inTx() {
		return s
	}
	return s.reads
}

// DB exposes the database for tests and benchmarks.
func (s *SQL) DB() *sql.DB { return s.db }

// InTx implements Store.
func (s *SQL) InTx(ctx context.Context, fn func(tx Store) error) error {
	if s.inTx() {
		return fn(s)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	inner := *s
	inner.q, inner.tx, inner.changed = tx, tx, new([]string)
	inner.txStmts = map[string]*sql.Stmt{}
	if s.stmts != nil {
		// What the transaction ran unprepared is prepared once it is
		// over and the connection is free.
		defer s.stmts.prepareWanted(ctx)
	}
	if s.unanalyzed != nil {
		inner.inserted = map[string]int{}
	}
	if err := fn(&inner); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := inner.writeNodeChanges(ctx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	s.analyzeAfter(ctx, inner.inserted)
	return nil
}

// inTx reports whether the store runs in a transaction.
func (s *SQL) inTx() bool { return s.tx != nil }

// analyzeRows is how many rows the agent inserts into a table, in one
// transaction or over several, before analyzeAfter first refreshes its
// statistics. Below it, what a stale estimate can cost a claim is a sort
// of a few thousand rows.
const analyzeRows = 5000

// analyzeRowsMax bounds how far apart later refreshes grow (insertCounts).
const analyzeRowsMax = 50000

// insertCounts counts rows inserted by table since their last ANALYZE.
// After a refresh the next waits for as many rows as the agent had
// inserted into the table by then (from analyzeRows up to
// analyzeRowsMax), so the statistics miss at most half of what the agent
// wrote, and never more than analyzeRowsMax rows. A create that forks its
// 100,000 nodes in parts of 1,000 refreshes each table five times instead
// of twenty, each ANALYZE sampling up to 30,000 rows: a fixed count
// refreshed them every fifth part and cost that create a quarter of its
// time.
type insertCounts struct {
	mu sync.Mutex
	n  map[string]int
	// next is the count at which a table is next refreshed, and total
	// the rows the agent has inserted into it.
	next, total map[string]int
}

// newInsertCounts returns counts that refresh first at analyzeRows.
func newInsertCounts() *insertCounts {
	return &insertCounts{n: map[string]int{}, next: map[string]int{}, total: map[string]int{}}
}

// due adds inserted to the counts and returns the tables whose count
// reached its threshold, whose counts start again. Only actions and nodes
// are counted: the claims and a batch's writes plan over them. Events,
// written a batch at a time by every create, are read in index order, and
// refreshing their statistics every 5,000 would cost a large create about
// a second.
func (c *insertCounts) due(inserted map[string]int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for table, n := range inserted {
		if table != "actions" && table != "nodes" {
			continue
		}
		c.n[table] += n
		c.total[table] += n
		if c.n[table] >= max(analyzeRows, c.next[table]) {
			c.n[table] = 0
			c.next[table] = min(c.total[table], analyzeRowsMax)
			out = append(out, table)
		}
	}
	return out
}

// analyzeAfter refreshes PostgreSQL's statistics of a table once the
// agent has inserted enough rows into it since the last refresh
// (insertCounts), as a large create's fork does and many small creates do
// together.
// The planner otherwise plans from statistics taken before the burst
// (autovacuum looks once a minute): it took a parent with 100,000 new
// children for one with a few, and chose its (parent, status, action)
// index and a sort of every READY child over the index that yields the
// claim's next 250 in order, so each claim cost the whole burst and a
// create of n nodes n². SQLite keeps no statistics here and needs none of
// this. Statistics only steer plans, so a failure here is left to
// autovacuum and not reported: the rows are committed.
func (s *SQL) analyzeAfter(ctx context.Context, inserted map[string]int) {
	if s.unanalyzed == nil {
		return
	}
	for _, table := range s.unanalyzed.due(inserted) {
		_, _ = s.db.ExecContext(ctx, "ANALYZE "+table)
	}
}

func (s *SQL) rebind(q string) string {
	if s.dialect != "postgres" {
		return q
	}
	// Into one buffer, copying the text between placeholders: a batch's
	// statement has thousands of them, and writing each through a string
	// of its own was a sixteenth of the agent's CPU in a create on
	// PostgreSQL. '?' is one byte in UTF-8 and no byte of a longer
	// character.
	count := strings.Count(q, "?")
	if count == 0 {
		return q
	}
	out := make([]byte, 0, len(q)+count*len(strconv.Itoa(count)))
	for n := 1; ; n++ {
		i := strings.IndexByte(q, '?')
		if i < 0 {
			return string(append(out, q...))
		}
		out = append(append(out, q[:i]...), '$')
		out = strconv.AppendInt(out, int64(n), 10)
		q = q[i+1:]
	}
}

func (s *SQL) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if s.trace != nil {
		s.trace(s.rebind(q), args)
	}
	if st, err := s.prepared(ctx, q); st != nil || err != nil {
		if err != nil {
			return nil, err
		}
		return st.ExecContext(ctx, args...)
	}
	return s.q.ExecContext(ctx, s.rebind(q), args...)
}

// unindexed is col in a term that SQLite must not search an index by. A
// statement that names its rows by id and also checks their status or
// owner should look up the ids; but SQLite, which keeps no statistics
// here, guesses that an equality on an indexed column matches a few rows
// and walks that index instead: a claim read every READY action, so
// creating n nodes cost n². SQLite's unary plus disqualifies a term from
// indexing; PostgreSQL plans from statistics and has no such operator
// for text.
func (s *SQL) unindexed(col string) string {
	if s.dialect == "postgres" {
		return col
	}
	return "+" + col
}

func (s *SQL) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if s.trace != nil {
		s.trace(s.rebind(q), args)
	}
	if st, err := s.prepared(ctx, q); st != nil || err != nil {
		if err != nil {
			return nil, err
		}
		return st.QueryContext(ctx, args...)
	}
	return s.q.QueryContext(ctx, s.rebind(q), args...)
}

// prepared is q prepared, on a store whose statements are cached, else
// nil. In a transaction it is the pool's statement made the
// transaction's; or, the first time the pool sees q, one the transaction
// prepares for itself (a fork runs one insert of a few hundred rows many
// times), and the pool's is prepared once the transaction is over
// (stmtCache.want).
func (s *SQL) prepared(ctx context.Context, q string) (*sql.Stmt, error) {
	if s.stmts == nil {
		return nil, nil
	}
	q = s.rebind(q)
	if s.tx != nil {
		if st := s.txStmts[q]; st != nil {
			return st, nil
		}
		var err error
		st := s.stmts.lookup(q)
		if st != nil {
			st = s.tx.StmtContext(ctx, st)
		} else {
			s.stmts.want(q)
			if st, err = s.tx.PrepareContext(ctx, q); err != nil {
				return nil, fmt.Errorf("prepare %q: %w", q, err)
			}
		}
		s.txStmts[q] = st
		return st, nil
	}
	st, err := s.stmts.get(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", q, err)
	}
	return st, nil
}

// queryRow is query for one row.
func (s *SQL) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if s.trace != nil {
		s.trace(s.rebind(q), args)
	}
	if st, err := s.prepared(ctx, q); st != nil || err != nil {
		if err != nil {
			// A failed prepare is a failed query: run it unprepared,
			// so the Row carries the error as Scan reports it.
			return s.q.QueryRowContext(ctx, s.rebind(q), args...)
		}
		return st.QueryRowContext(ctx, args...)
	}
	return s.q.QueryRowContext(ctx, s.rebind(q), args...)
}

// TraceQueries has fn see the queries the store's reads and claims run from
// now on (nil stops it), so a test can check their plans; it is not safe to
// call while the store is in use.
func (s *SQL) TraceQueries(fn func(query string, args []any)) {
	s.trace = fn
	if s.reads != nil {
		s.reads.trace = fn
	}
}

// insertMany inserts rows in chunks of multi-row INSERTs: one statement per
// few hundred rows is what makes a 10,000-node cluster cheap to write. On
// PostgreSQL the chunks pass their values as arrays (insertArrays).
func (s *SQL) insertMany(ctx context.Context, table, cols string, n int, args func(i int) []any) error {
	return s.upsertMany(ctx, table, cols, "", n, args)
}

// upsertMany is insertMany with an ON CONFLICT clause (onConflict, "" for
// none) after each chunk's rows, which both dialects read after VALUES and
// after PostgreSQL's SELECT from unnest alike.
func (s *SQL) upsertMany(ctx context.Context, table, cols, onConflict string, n int, args func(i int) []any) error {
	if s.dialect == "postgres" {
		if err := s.insertArrays(ctx, table, cols, onConflict, n, args); err != nil {
			return err
		}
		s.countForAnalyze(ctx, table, n)
		return nil
	}
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
		b.WriteString(onConflict)
		if _, err := s.exec(ctx, b.String(), all...); err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
	}
	s.countForAnalyze(ctx, table, n)
	return nil
}

// countForAnalyze counts n rows inserted into table towards the next
// refresh of its statistics (analyzeAfter): at once outside a
// transaction, at the commit in one.
func (s *SQL) countForAnalyze(ctx context.Context, table string, n int) {
	switch {
	case s.unanalyzed == nil: // no statistics to keep (SQLite)
	case s.inTx():
		s.inserted[table] += n
	default:
		s.analyzeAfter(ctx, map[string]int{table: n})
	}
}

// arrayRows is how many rows one of insertArrays' statements inserts: its
// size does not change the statement, only the message that carries it
// (a node's row is a few hundred bytes).
const arrayRows = 1000

// insertArrays is insertMany on PostgreSQL: the rows go as one array per
// column, which the statement unnests into rows. A multi-row INSERT of a
// few hundred rows has thousands of parameters, and the server parsed and
// typed each of them on every call, and planned most calls afresh, since
// each count of rows was a statement of its own. Measured on the inserts
// of a 10,000-node fork (nodes and their actions, in transactions of
// 1,000), arrays took 26-27 µs per node where multi-row statements took
// 36-42.
func (s *SQL) insertArrays(ctx context.Context, table, cols, onConflict string, n int, args func(i int) []any) error {
	names := strings.Split(cols, ",")
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (" + cols + ") SELECT * FROM unnest(")
	for i, c := range names {
		c = strings.TrimSpace(c)
		typ, ok := s.columnTypes[table][c]
		if !ok {
			return fmt.Errorf("insert into %s: the catalog has no column %s in it", table, c)
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("CAST(? AS " + typ + "[])")
	}
	b.WriteString(")" + onConflict)
	q := b.String()
	for start := 0; start < n; start += arrayRows {
		end := min(start+arrayRows, n)
		columns := make([][]any, len(names))
		for c := range columns {
			columns[c] = make([]any, 0, end-start)
		}
		for i := start; i < end; i++ {
			row := args(i)
			if len(row) != len(names) {
				return fmt.Errorf("insert into %s: %d values for %d columns", table, len(row), len(names))
			}
			for c, v := range row {
				columns[c] = append(columns[c], v)
			}
		}
		all := make([]any, len(columns))
		for c := range columns {
			all[c] = columns[c]
		}
		if _, err := s.exec(ctx, q, all...); err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
	}
	return nil
}

// readColumnTypes reads the type of every column of the schema's tables
// from PostgreSQL's catalog, by table and column.
func (s *SQL) readColumnTypes(ctx context.Context) (map[string]map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod)
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped`)
	if err != nil {
		return nil, fmt.Errorf("read column types: %w", err)
	}
	defer rows.Close()
	types := map[string]map[string]string{}
	for rows.Next() {
		var table, col, typ string
		if err := rows.Scan(&table, &col, &typ); err != nil {
			return nil, fmt.Errorf("read column types: %w", err)
		}
		if types[table] == nil {
			types[table] = map[string]string{}
		}
		types[table][col] = typ
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read column types: %w", err)
	}
	return types, nil
}

// idsIn returns the condition that col is one of ids, with its arguments:
// "col IN (?, …)" with an argument per id; on PostgreSQL "col = ANY(?)"
// with the ids as one text array, one statement text whatever their
// count, which each connection prepares and plans once rather than a
// statement of hundreds of parameters for each count of ids.
func (s *SQL) idsIn(col string, ids []string) (string, []any) {
	if s.dialect == "postgres" {
		return col + " = ANY(?)", []any{ids}
	}
	return col + " IN (" + placeholders(len(ids)) + ")", anys(ids)
}

// countInserted adds n rows a transaction inserted into a counted table
// to SQLite's kept counts (migration 0013), one upsert per key: key(i)
// returns the values of row i for keyCols (at most three), in order, or
// false for a row that is not counted. SQLite's triggers would run once
// per row (migration 0017); PostgreSQL's run once per statement and count
// the rows themselves, so there it does nothing.
func (s *SQL) countInserted(ctx context.Context, table string, keyCols []string, n int, key func(i int) ([3]string, bool)) error {
	if s.dialect == "postgres" {
		return nil
	}
	counts := map[[3]string]int{}
	for i := range n {
		if k, ok := key(i); ok {
			counts[k]++
		}
	}
	cols := strings.Join(keyCols, ", ")
	upsert := "INSERT INTO " + table + " (" + cols + ", n) VALUES (" + placeholders(len(keyCols)+1) + ") ON CONFLICT (" + cols + ") DO UPDATE SET n = n + excluded.n"
	for k, c := range counts {
		args := make([]any, 0, len(keyCols)+1)
		for _, v := range k[:len(keyCols)] {
			args = append(args, v)
		}
		if _, err := s.exec(ctx, upsert, append(args, c)...); err != nil {
			return fmt.Errorf("count rows inserted into %s: %w", table, err)
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

// toJSON and fromJSON pass an empty map without the encoder: most
// actions' inputs, outputs and data and most nodes' data are empty, and a
// large create writes and reads them hundreds of thousands of times.
func toJSON(m map[string]any) string {
	if len(m) == 0 {
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
	if s == "{}" || s == "" {
		return m
	}
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

var (
	uuidRE    = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	shortIDRE = regexp.MustCompile(`^[0-9a-fA-F-]+$`)
)

// wildcards are characters no id or name holds that match anything in SQL
// LIKE or in shell globs; a reference holding one is refused rather than
// looked up, so it can never select an object by pattern.
const wildcards = "%*?"

// checkRef refuses a reference that cannot name any object: an empty one, or
// one holding a wildcard character. kind names the object in the message.
func checkRef(kind, ident string) error {
	if ident == "" {
		return &InvalidRefError{Kind: kind, Ident: ident, Rule: "an empty reference names nothing."}
	}
	if strings.ContainsAny(ident, wildcards) {
		return &InvalidRefError{Kind: kind, Ident: ident, Rule: "references are matched literally and must not contain '%', '*' or '?'."}
	}
	return nil
}

// find implements Senlin's lookup: a UUID-shaped ident is tried as id then
// name; anything else as name, then as an id prefix of at least MinShortID
// characters. Several matches are an AmbiguousError. Every comparison is
// literal: the prefix is compared with substr, not LIKE, so '_' and '%' in a
// reference are ordinary characters on both SQLite and PostgreSQL.
func (s *SQL) find(ctx context.Context, kind, table, project, ident string, get func(id string) error) error {
	if err := checkRef(kind, ident); err != nil {
		return err
	}
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
	type lookup struct{ where, arg string }
	var try []lookup
	switch {
	case uuidRE.MatchString(ident):
		try = []lookup{{"id = ?", strings.ToLower(ident)}, {"name = ?", ident}}
	case len(ident) >= MinShortID && shortIDRE.MatchString(ident):
		// Ids are lowercase UUIDs; the length is a literal, never user input.
		try = []lookup{{"name = ?", ident}, {"substr(id, 1, " + strconv.Itoa(len(ident)) + ") = ?", strings.ToLower(ident)}}
	default:
		try = []lookup{{"name = ?", ident}}
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

// list builds WHERE/ORDER/LIMIT from ListOpts. A marker is resolved to its
// row's sort values and the page starts after them in the index order
// (keyset paging), so a page costs what it returns however deep it is;
// only a marker whose sort values include a NULL, whose position SQL's
// comparisons cannot express, is found by skipping rows up to it.
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
	if !o.Since.IsZero() && table == "events" {
		where = append(where, "ts >= ?")
		args = append(args, us(o.Since))
	}
	var order []sortColumn
	for _, k := range o.Sort {
		order = append(order, sortColumn{column(k.Key), k.Desc})
	}
	if len(order) == 0 {
		for _, k := range defaultSort {
			order = append(order, sortColumn{name: k})
		}
	}
	order = append(order, sortColumn{name: "id"})
	skipTo := ""
	if o.Marker != "" {
		after, afterArgs, found, err := s.afterMarker(ctx, table, o.Marker, where, args, order)
		if err != nil {
			return err
		}
		if !found {
			return nil // a marker outside the listed rows starts no page
		}
		if after == "" {
			skipTo = o.Marker
		} else {
			where = append(where, after)
			args = append(args, afterArgs...)
		}
	}
	q := "SELECT " + cols + " FROM " + table
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	terms := make([]string, len(order))
	for i, c := range order {
		terms[i] = c.name + c.dir()
	}
	q += " ORDER BY " + strings.Join(terms, ", ")
	if o.Limit > 0 && skipTo == "" {
		q += " LIMIT " + strconv.Itoa(o.Limit)
	}
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("list %s: %w", table, err)
	}
	defer rows.Close()
	seenMarker := skipTo == ""
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
			if id == skipTo {
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

// sortColumn is one term of a list's ORDER BY.
type sortColumn struct {
	name string
	desc bool
}

func (c sortColumn) dir() string {
	if c.desc {
		return " DESC"
	}
	return " ASC"
}

// afterMarker reads the marker row's sort values (within the list's own
// filters: a marker the list would not show is not found) and returns the
// condition that keeps the rows after it in order: a row-value comparison
// when every term sorts the same way, which both databases answer with an
// index seek, else the expanded form. It returns no condition when a sort
// value is NULL.
func (s *SQL) afterMarker(ctx context.Context, table, marker string, where []string, args []any, order []sortColumn) (string, []any, bool, error) {
	names := make([]string, len(order))
	for i, c := range order {
		names[i] = c.name
	}
	q := "SELECT " + strings.Join(names, ", ") + " FROM " + table + " WHERE " + strings.Join(append([]string{"id = ?"}, where...), " AND ")
	vals := make([]any, len(order))
	ptrs := make([]any, len(order))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	err := s.queryRow(ctx, q, append([]any{marker}, args...)...).Scan(ptrs...)
	if err == sql.ErrNoRows {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, false, fmt.Errorf("find marker %s in %s: %w", marker, table, err)
	}
	sameWay := true
	for i, v := range vals {
		if v == nil {
			return "", nil, true, nil
		}
		if order[i].desc != order[0].desc {
			sameWay = false
		}
	}
	cmp := func(c sortColumn) string {
		if c.desc {
			return " < "
		}
		return " > "
	}
	if sameWay {
		return "(" + strings.Join(names, ", ") + ")" + cmp(order[0]) + "(" + placeholders(len(names)) + ")", vals, true, nil
	}
	var ors []string
	var out []any
	for i, c := range order {
		var ands []string
		for j := range i {
			ands = append(ands, order[j].name+" = ?")
			out = append(out, vals[j])
		}
		ands = append(ands, c.name+cmp(c)+"?")
		out = append(out, vals[i])
		ors = append(ors, "("+strings.Join(ands, " AND ")+")")
	}
	return "(" + strings.Join(ors, " OR ") + ")", out, true, nil
}

// ids runs a query that selects one id column.
func (s *SQL) ids(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := s.query(ctx, q, args...)
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

// batchTx runs fn in a transaction (the caller's, when it is in one)
// that plans its statements once for any parameters from then on
// (PostgreSQL's generic plans) instead of for each call's values. A
// create's batch statements (claims, results, ends) name up to 500 rows
// by id, and each connection of the pool planned its first five calls of
// each afresh: at 10,000 nodes most calls were such first ones, and
// planning took a tenth of the server's time. Their plans do not depend
// on the values: rows by primary key, and claims through the one index
// that yields their order. The setting holds until the transaction ends,
// for the caller's later statements too, which is why only those writes
// use this. On SQLite it is InTx.
func (s *SQL) batchTx(ctx context.Context, fn func(t *SQL) error) error {
	return s.InTx(ctx, func(tx Store) error {
		t := tx.(*SQL)
		if t.dialect == "postgres" && !t.generic {
			if _, err := t.exec(ctx, "SET LOCAL plan_cache_mode = force_generic_plan"); err != nil {
				return fmt.Errorf("use generic plans: %w", err)
			}
			t.generic = true
		}
		return fn(t)
	})
}
