package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/core/store/postgres"
	"github.com/grovehq/grove/core/store/postgres/pgtest"
	"github.com/grovehq/grove/core/store/storetest"
)

func TestConformance(t *testing.T) {
	srv := pgtest.Start(t, 55441)
	n := 0
	storetest.Run(t, func(t *testing.T) store.Store {
		n++
		admin, err := postgres.Open(context.Background(), srv.DSN())
		if err != nil {
			t.Fatal(err)
		}
		db := fmt.Sprintf("conf%d", n)
		if _, err := admin.DB().Exec("CREATE DATABASE " + db); err != nil {
			t.Fatal(err)
		}
		admin.Close()
		s, err := postgres.Open(context.Background(), fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable", srv.Dir, srv.Port, db))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
