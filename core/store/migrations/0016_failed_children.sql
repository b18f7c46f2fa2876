-- +goose Up
-- One index fewer to move at each step of a child action's life (issue
-- 24). actions_parent (parent, status, action) served the summaries of a
-- parent's children by status, which the kept counts answer since
-- migration 0013, and the few writes that look for a parent's children in
-- one status (cancels, lifecycle releases), which are rare and read the
-- waiting actions through actions_pending or the parent's children through
-- actions_parent_created instead. Yet every claim and every end of a child
-- moved its entry: two of a node create's eight index writes after its
-- insert, and half the cost of an end in a store test of the writes. What
-- it alone still answered, a parent's first failed child for
-- GET /v1/actions/{id}, reads actions_failed, which holds failed and
-- cancelled actions only. The condition is the store's failedTerm word
-- for word: SQLite uses a partial index only for a query that states it.
DROP INDEX actions_parent;
CREATE INDEX actions_failed ON actions (parent_id, updated_at, id) WHERE status IN ('FAILED', 'CANCELLED');
