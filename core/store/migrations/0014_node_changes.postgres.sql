-- +goose Up
-- A generation per cluster that moves whenever any of its nodes is
-- inserted, changed or deleted (see 0014_node_changes.sqlite.sql for why).
-- One counter row per cluster, not deltas as the counts keep: a reader
-- that has seen generation g must be sure every write that made g has
-- committed, which a row that each writer updates in turn gives (the next
-- writer waits for the row until the last commits) and values handed out
-- before commit, such as a sequence's, do not. Writers update it last in
-- their transactions, so they queue only for the time of a commit.
CREATE TABLE node_changes (
  cluster_id TEXT NOT NULL PRIMARY KEY,
  gen BIGINT NOT NULL
);
INSERT INTO node_changes (cluster_id, gen)
  SELECT DISTINCT cluster_id, 1 FROM nodes WHERE cluster_id <> '';

-- +goose StatementBegin
CREATE FUNCTION grove_node_changes_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO node_changes (cluster_id, gen) VALUES (OLD.cluster_id, 1)
    ON CONFLICT (cluster_id) DO UPDATE SET gen = node_changes.gen + 1;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER node_changes_move AFTER UPDATE OF cluster_id ON nodes FOR EACH ROW
  WHEN (OLD.cluster_id <> '' AND OLD.cluster_id IS DISTINCT FROM NEW.cluster_id)
  EXECUTE PROCEDURE grove_node_changes_move();

