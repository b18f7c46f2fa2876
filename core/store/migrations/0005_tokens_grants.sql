-- +goose Up
-- API tokens. The secret is never stored, only its SHA-256 (hex), which is
-- what a request is looked up by; id is the accessor lists and audit show.
CREATE TABLE tokens (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  project TEXT NOT NULL,
  role TEXT NOT NULL,
  hash TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT,
  created_by TEXT NOT NULL
);
CREATE UNIQUE INDEX tokens_hash ON tokens (hash);

-- Host-access grants: which profile types that reach the agent's host (such
-- as local.process) a project may use. Only an admin grants them.
CREATE TABLE project_grants (
  project TEXT NOT NULL,
  type TEXT NOT NULL,
  PRIMARY KEY (project, type)
);

-- Definition sets belong to a project: a set name in one project is not the
-- same set as in another, and a member sees only its project's ownership
-- records. Existing records take the project of the object they name.
ALTER TABLE set_objects ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
UPDATE set_objects SET project = COALESCE(
  CASE kind
    WHEN 'profile' THEN (SELECT project FROM profiles WHERE profiles.id = set_objects.object_id)
    WHEN 'policy' THEN (SELECT project FROM policies WHERE policies.id = set_objects.object_id)
    WHEN 'cluster' THEN (SELECT project FROM clusters WHERE clusters.id = set_objects.object_id)
  END, 'default');
CREATE INDEX set_objects_project_set ON set_objects (project, set_name);
