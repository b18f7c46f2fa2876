-- +goose Up
-- The store counts the nodes and child actions it inserts itself, one
-- statement per cluster and status (or parent, kind and status) in the
-- inserting transaction (store.countInserted), instead of a trigger call
-- per row: SQLite's triggers run for each row, and these two were an
-- eighth of the cost of a create's fork in a store test of its writes
-- (issue 24). Every insert of a node or an action goes through the
-- store's insertMany. The triggers on updates and deletes stay: those
-- change rows one by one from many statements. PostgreSQL's triggers run
-- once per statement already (0017_counted_inserts.postgres.sql).
DROP TRIGGER node_counts_insert;
DROP TRIGGER action_counts_insert;
