-- +goose Up
-- Fewer index entries to move when actions and nodes change status (issue
-- 24). Before this, five indexes on actions led with or held the status,
-- so each of the three writes of a node action's life (READY, RUNNING, an
-- end) moved an entry in each of them, and ended actions, most of the
-- table, sat in all of them. Now the claim indexes hold an action only
-- while it waits or runs: a claim moves two entries and drops one, and an
-- end drops one and moves one (actions_parent, which the summaries and
-- cancels of a parent's children read by status). The owner index goes:
-- reclaims read the running actions through actions_pending. The target
-- index orders a node's actions by creation instead of status: a node
-- keeps a few (the reaper trims them), and status changes leave it alone.
-- The conditions are the store's pendingTerm and readyTerm word for word:
-- SQLite uses a partial index only for a query that states its condition.
-- nodes_cluster_status goes too: a cluster's nodes are counted from
-- node_counts (migration 0013), and no read asks for them by status
-- through an index, so a node's status changes touch none of its
-- indexes. PostgreSQL: 0015_pending_actions.postgres.sql.
DROP INDEX actions_ready;
DROP INDEX actions_ready_order;
DROP INDEX actions_owner;
DROP INDEX actions_target;
CREATE INDEX actions_ready ON actions (parent_id, created_at, id) WHERE status = 'READY';
CREATE INDEX actions_pending ON actions (status, created_at, id)
  WHERE status IN ('INIT', 'READY', 'RUNNING', 'WAITING', 'WAITING_LIFECYCLE_COMPLETION');
CREATE INDEX actions_target ON actions (target, created_at, id);
DROP INDEX nodes_cluster_status;
