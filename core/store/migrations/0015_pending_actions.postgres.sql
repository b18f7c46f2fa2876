-- +goose Up
-- The indexes of 0015_pending_actions.sqlite.sql, which says why, and room
-- on the nodes' pages. With no index on a node's status, a change of
-- status, reason, physical id or data is a heap-only update when the new
-- version fits on the row's page: no index entry is written. Pages filled
-- to the default 100% leave no such room, so each of a created node's two
-- updates (CREATING, then ACTIVE with its results) wrote an entry in every
-- index of nodes. Half-full pages hold the next version; the nodes table
-- takes twice the space. Pages written before this migration keep their
-- fill until rewritten (VACUUM FULL).
DROP INDEX actions_ready;
DROP INDEX actions_ready_order;
DROP INDEX actions_owner;
DROP INDEX actions_target;
-- Claims order by "created_at + 0" (store.ClaimActions says why): the
-- claim indexes are keyed by that expression, so that no other index can
-- yield the claims' order.
CREATE INDEX actions_ready ON actions (parent_id, (created_at + 0), id) WHERE status = 'READY';
CREATE INDEX actions_pending ON actions (status, (created_at + 0), id)
  WHERE status IN ('INIT', 'READY', 'RUNNING', 'WAITING', 'WAITING_LIFECYCLE_COMPLETION');
CREATE INDEX actions_target ON actions (target, created_at, id);
DROP INDEX nodes_cluster_status;
ALTER TABLE nodes SET (fillfactor = 50);
