-- +goose Up
-- Cluster names are unique within a project (clusters are tracked by name:
-- HCL, Terraform import, the CLI). The engine checks before it writes, but two
-- concurrent creates can both pass that check; this index makes the second
-- insert fail, and the store answers it as the same conflict.
--
-- Stores written before the index may already hold duplicates from that race.
-- Every duplicate but the oldest is renamed NAME-<first 8 characters of its
-- id>, so the index can be built and no cluster is lost.
UPDATE clusters SET name = name || '-' || substr(id, 1, 8)
WHERE EXISTS (
  SELECT 1 FROM clusters older
  WHERE older.project = clusters.project AND older.name = clusters.name
    AND (older.init_at < clusters.init_at OR (older.init_at = clusters.init_at AND older.id < clusters.id))
);
CREATE UNIQUE INDEX clusters_project_name ON clusters (project, name);
