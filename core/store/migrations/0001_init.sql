-- +goose Up
-- Grove schema, version 1. Written once for SQLite and PostgreSQL: times are
-- Unix microseconds in BIGINT, booleans are 0/1 INTEGER, documents are JSON TEXT.
CREATE TABLE profiles (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  version TEXT NOT NULL,
  spec TEXT NOT NULL,
  properties TEXT NOT NULL,
  metadata TEXT NOT NULL,
  usr TEXT NOT NULL,
  project TEXT NOT NULL,
  domain TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT
);
CREATE INDEX profiles_name ON profiles (name);

CREATE TABLE policies (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  version TEXT NOT NULL,
  spec TEXT NOT NULL,
  properties TEXT NOT NULL,
  data TEXT NOT NULL,
  usr TEXT NOT NULL,
  project TEXT NOT NULL,
  domain TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT
);
CREATE INDEX policies_name ON policies (name);

CREATE TABLE clusters (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  profile_id TEXT NOT NULL,
  usr TEXT NOT NULL,
  project TEXT NOT NULL,
  domain TEXT NOT NULL,
  init_at BIGINT NOT NULL,
  created_at BIGINT,
  updated_at BIGINT,
  min_size INTEGER NOT NULL,
  max_size INTEGER NOT NULL,
  desired_capacity INTEGER NOT NULL,
  next_index INTEGER NOT NULL,
  timeout INTEGER NOT NULL,
  status TEXT NOT NULL,
  status_reason TEXT NOT NULL,
  metadata TEXT NOT NULL,
  data TEXT NOT NULL,
  config TEXT NOT NULL,
  dependents TEXT NOT NULL
);
CREATE INDEX clusters_name ON clusters (name);

CREATE TABLE nodes (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  cluster_id TEXT NOT NULL,
  physical_id TEXT NOT NULL,
  profile_id TEXT NOT NULL,
  usr TEXT NOT NULL,
  project TEXT NOT NULL,
  domain TEXT NOT NULL,
  idx INTEGER NOT NULL,
  role TEXT NOT NULL,
  init_at BIGINT NOT NULL,
  created_at BIGINT,
  updated_at BIGINT,
  status TEXT NOT NULL,
  status_reason TEXT NOT NULL,
  tainted INTEGER NOT NULL,
  data TEXT NOT NULL,
  metadata TEXT NOT NULL,
  dependents TEXT NOT NULL,
  state TEXT NOT NULL
);
CREATE INDEX nodes_cluster ON nodes (cluster_id, idx);
CREATE INDEX nodes_name ON nodes (name);

CREATE TABLE actions (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  cluster_id TEXT NOT NULL,
  target TEXT NOT NULL,
  action TEXT NOT NULL,
  cause TEXT NOT NULL,
  owner TEXT NOT NULL,
  lease_expires BIGINT NOT NULL,
  start_time DOUBLE PRECISION NOT NULL,
  end_time DOUBLE PRECISION NOT NULL,
  timeout INTEGER NOT NULL,
  status TEXT NOT NULL,
  status_reason TEXT NOT NULL,
  control TEXT NOT NULL,
  inputs TEXT NOT NULL,
  outputs TEXT NOT NULL,
  data TEXT NOT NULL,
  parent_id TEXT NOT NULL,
  usr TEXT NOT NULL,
  project TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT
);
CREATE INDEX actions_ready ON actions (status, parent_id, created_at);
CREATE INDEX actions_parent ON actions (parent_id, status);
CREATE INDEX actions_target ON actions (target, status);
CREATE INDEX actions_owner ON actions (owner, status);

CREATE TABLE bindings (
  id TEXT PRIMARY KEY,
  cluster_id TEXT NOT NULL,
  policy_id TEXT NOT NULL,
  enabled INTEGER NOT NULL,
  priority INTEGER NOT NULL,
  data TEXT NOT NULL,
  last_op BIGINT,
  UNIQUE (cluster_id, policy_id)
);

CREATE TABLE events (
  id TEXT PRIMARY KEY,
  ts BIGINT NOT NULL,
  oid TEXT NOT NULL,
  oname TEXT NOT NULL,
  otype TEXT NOT NULL,
  cluster_id TEXT NOT NULL,
  usr TEXT NOT NULL,
  project TEXT NOT NULL,
  action TEXT NOT NULL,
  status TEXT NOT NULL,
  status_reason TEXT NOT NULL,
  level INTEGER NOT NULL,
  meta_data TEXT NOT NULL
);
CREATE INDEX events_ts ON events (ts, id);
CREATE INDEX events_oid ON events (oid);
CREATE INDEX events_cluster ON events (cluster_id);

CREATE TABLE cluster_locks (
  cluster_id TEXT PRIMARY KEY,
  action_ids TEXT NOT NULL,
  semaphore INTEGER NOT NULL
);

CREATE TABLE node_locks (
  node_id TEXT PRIMARY KEY,
  action_id TEXT NOT NULL
);
