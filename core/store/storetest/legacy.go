package storetest

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

//go:embed testdata/legacy_v3.sql
var legacyV3 string

// WriteLegacy writes into an empty database the schema as Grove wrote it
// before its migrations moved to goose (versions 1 to 3, recorded in
// schema_migrations), with a profile and three clusters; two of them share a
// name in one project, which version 4 no longer allows.
func WriteLegacy(t testing.TB, db *sql.DB) {
	t.Helper()
	body := regexp.MustCompile(`(?m)^\s*--.*$`).ReplaceAllString(legacyV3, "")
	for _, stmt := range strings.Split(body, ";") {
		if stmt = strings.TrimSpace(stmt); stmt == "" {
			continue
		}
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("write legacy schema: %v\n%s", err, stmt)
		}
	}
}

// CheckUpgraded checks a store opened on what WriteLegacy wrote: it is at
// the newest schema version, the old version table is gone, the rows are
// kept, and the younger of the two clusters sharing a name was renamed.
func CheckUpgraded(t testing.TB, s *store.SQL) {
	t.Helper()
	ctx := context.Background()
	if v, want := s.SchemaVersion(), store.LatestSchemaVersion(); v != want {
		t.Errorf("schema version %d after the upgrade, want %d", v, want)
	}
	if _, err := s.DB().Exec("SELECT version FROM schema_migrations"); err == nil {
		t.Error("schema_migrations is still there after the upgrade")
	}
	var applied []int64
	rows, err := s.DB().Query("SELECT version_id FROM grove_schema_version ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		applied = append(applied, v)
	}
	rows.Close()
	var want []int64
	for v := range store.LatestSchemaVersion() + 1 {
		want = append(want, v)
	}
	if !slices.Equal(applied, want) {
		t.Errorf("recorded versions %v, want %v (each once)", applied, want)
	}
	if p, err := s.FindProfile(ctx, "p1", "pr"); err != nil || p.ID != "0f000000-0000-4000-8000-000000000001" {
		t.Errorf("the profile did not survive the upgrade: %v, %v", p, err)
	}
	for id, want := range map[string]string{
		"c1000000-0000-4000-8000-000000000001": "web",
		"c2000000-0000-4000-8000-000000000002": "web-c2000000",
		"c3000000-0000-4000-8000-000000000003": "web",
	} {
		c, err := s.GetCluster(ctx, id)
		if err != nil || c.Name != want {
			t.Errorf("cluster %s after the upgrade: %v, %v; want named %s", id, c, err, want)
		}
	}
	// Ownership records take the project of the object they name (version
	// 5); a record of an object that is gone falls back to "default".
	if o, err := s.OwnerOf(ctx, "cluster", "c3000000-0000-4000-8000-000000000003"); err != nil || o == nil || o.Project != "p2" {
		t.Errorf("the set record of a cluster of p2 after the upgrade: %+v, %v", o, err)
	}
	if o, err := s.OwnerOf(ctx, "profile", "dead0000-0000-4000-8000-000000000000"); err != nil || o == nil || o.Project != "default" {
		t.Errorf("the set record of a deleted profile after the upgrade: %+v, %v", o, err)
	}
	// Version 19 moved records kept by name or short id to the id they
	// name; the record under the id stays the owner, the others give way,
	// and a name that names two objects is left as it was.
	for _, c := range []struct{ kind, id, set, name string }{
		{"cluster", "c5000000-0000-4000-8000-000000000005", "ops", "db"},
		{"cluster", "db", "", ""},
		{"cluster", "C5000000-0000", "", ""},
		{"profile", "0f000000-0000-4000-8000-000000000002", "ops", "pd"},
		{"profile", "pd", "", ""},
		{"profile", "twin", "ops", "twin"},
	} {
		o, err := s.OwnerOf(ctx, c.kind, c.id)
		switch {
		case err != nil:
			t.Errorf("the owner of %s %s after the upgrade: %v", c.kind, c.id, err)
		case c.set == "" && o != nil:
			t.Errorf("%s %s is still recorded after the upgrade: %+v", c.kind, c.id, o)
		case c.set != "" && (o == nil || o.Set != c.set || o.Name != c.name):
			t.Errorf("the owner of %s %s after the upgrade: %+v; want set %s naming it %s", c.kind, c.id, o, c.set, c.name)
		}
	}
	// Version 13 counted the nodes and child actions already there.
	if got, err := s.CountNodesByStatus(ctx, "c1000000-0000-4000-8000-000000000001"); err != nil || fmt.Sprint(got) != "map[ACTIVE:2 ERROR:1]" {
		t.Errorf("node counts after the upgrade: %v, %v; want 2 ACTIVE and 1 ERROR", got, err)
	}
	if sum, err := s.SummarizeChildren(ctx, "a0000000-0000-4000-8000-000000000001"); err != nil || sum.Total != 3 || sum.Failed != 1 || sum.Pending != 0 {
		t.Errorf("child counts after the upgrade: %+v, %v; want 3 children, 1 failed", sum, err)
	}
	// The upgraded store enforces the new rule.
	c := &model.Cluster{ID: "c4000000-0000-4000-8000-000000000004", Name: "web", ProfileID: "p", Project: "p1", InitAt: t0, MaxSize: -1, Status: "INIT"}
	if err := s.CreateCluster(ctx, c); !errors.Is(err, store.ErrDuplicate) {
		t.Errorf("a third cluster named web in p1 after the upgrade: %v; want a DuplicateError", err)
	}
}
