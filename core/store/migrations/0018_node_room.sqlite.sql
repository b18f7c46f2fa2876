-- +goose Up
-- Nothing changes on SQLite, which rewrites a row in place and keeps no
-- fill factor; PostgreSQL leaves more room on the nodes' pages from this
-- version on (0018_node_room.postgres.sql).
SELECT 1;
