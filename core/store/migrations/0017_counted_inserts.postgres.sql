-- +goose Up
-- Nothing changes on PostgreSQL, whose count triggers run once per
-- statement over its transition table (0013_counts.postgres.sql); SQLite
-- counts inserted rows in the store from this version on
-- (0017_counted_inserts.sqlite.sql).
SELECT 1;
