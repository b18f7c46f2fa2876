-- +goose Up
-- Dependencies between clusters (docs/dependencies.md). A group is held by
-- the cluster that waits (cluster_id); declared_by is the cluster whose
-- declaration wrote it, itself for a dependency, another cluster for a
-- dependent (SMF imports a `dependent` as a dependency of its target).
-- members is a JSON array of cluster names, "milestone:NAME" and
-- "path:/...". group_kind is the grouping (require_all, ...).
CREATE TABLE cluster_dependencies (
  cluster_id TEXT NOT NULL,
  name TEXT NOT NULL,
  group_kind TEXT NOT NULL,
  restart_on TEXT NOT NULL,
  members TEXT NOT NULL,
  declared_by TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (cluster_id, name)
);
CREATE INDEX cluster_dependencies_declared_by ON cluster_dependencies (declared_by);

-- Milestones: named sets of clusters; clusters is a JSON array of cluster
-- names.
CREATE TABLE milestones (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  clusters TEXT NOT NULL,
  usr TEXT NOT NULL,
  project TEXT NOT NULL,
  domain TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT
);
CREATE UNIQUE INDEX milestones_project_name ON milestones (project, name);

