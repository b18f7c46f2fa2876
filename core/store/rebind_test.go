package store

import (
	"strings"
	"testing"
)

func TestRebind(t *testing.T) {
	pg, lite := &SQL{dialect: "postgres"}, &SQL{dialect: "sqlite"}
	many := "IN (" + strings.TrimSuffix(strings.Repeat("?,", 12), ",") + ")"
	for _, c := range []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"", ""},
		{"?", "$1"},
		{"a = ? AND b = ?", "a = $1 AND b = $2"},
		{"x = ?", "x = $1"},
		{"name = 'é' AND v = ?, w = '日本'?", "name = 'é' AND v = $1, w = '日本'$2"},
		{many, "IN ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)"},
	} {
		if got := pg.rebind(c.in); got != c.want {
			t.Errorf("rebind(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := lite.rebind(c.in); got != c.in {
			t.Errorf("SQLite: rebind(%q) = %q, want it unchanged", c.in, got)
		}
	}
}

// BenchmarkRebind rebinds a batch's statement of 2,000 placeholders.
func BenchmarkRebind(b *testing.B) {
	s := &SQL{dialect: "postgres"}
	q := "INSERT INTO t (a, b, c, d, e, f, g, h) VALUES " + strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?), ", 250), ", ")
	b.ReportAllocs()
	for b.Loop() {
		_ = s.rebind(q)
	}
}
