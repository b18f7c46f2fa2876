-- The schema as Grove wrote it before goose (versions 1 to 3, recorded in
-- schema_migrations), frozen to test the upgrade of stores made then.
CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY);
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
-- Definition sets: which HCL definition set owns which object, by the name
-- the set gives it. An object belongs to at most one set.
CREATE TABLE set_objects (
  set_name TEXT NOT NULL,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  object_id TEXT NOT NULL,
  PRIMARY KEY (kind, object_id)
);
CREATE INDEX set_objects_set ON set_objects (set_name);
-- Health claims: which agent checks a cluster's nodes and restarts its dead
-- ones. Agents sharing a store would otherwise all check every cluster and
-- write the same nodes from stale reads.
CREATE TABLE health_claims (
  cluster_id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  expires BIGINT NOT NULL
);
INSERT INTO schema_migrations (version) VALUES (1);
INSERT INTO schema_migrations (version) VALUES (2);
INSERT INTO schema_migrations (version) VALUES (3);
-- Rows: a profile, and clusters named web twice in project p1 (the race the
-- unique index of version 4 closes) and once in p2.
INSERT INTO profiles VALUES ('0f000000-0000-4000-8000-000000000001', 'pr', 'local.process', '1.0', '{}', '{}', '{}', 'u', 'p1', '', 1767322800000000, NULL);
INSERT INTO clusters VALUES ('c1000000-0000-4000-8000-000000000001', 'web', '0f000000-0000-4000-8000-000000000001', 'u', 'p1', '', 1767322800000000, NULL, NULL, 0, -1, 0, 1, 3600, 'ACTIVE', '', '{}', '{}', '{}', '{}');
INSERT INTO clusters VALUES ('c2000000-0000-4000-8000-000000000002', 'web', '0f000000-0000-4000-8000-000000000001', 'u', 'p1', '', 1767322801000000, NULL, NULL, 0, -1, 0, 1, 3600, 'ACTIVE', '', '{}', '{}', '{}', '{}');
INSERT INTO clusters VALUES ('c3000000-0000-4000-8000-000000000003', 'web', '0f000000-0000-4000-8000-000000000001', 'u', 'p2', '', 1767322802000000, NULL, NULL, 0, -1, 0, 1, 3600, 'ACTIVE', '', '{}', '{}', '{}', '{}');
INSERT INTO set_objects VALUES ('web', 'cluster', 'web', 'c3000000-0000-4000-8000-000000000003');
INSERT INTO nodes VALUES ('d0000000-0000-4000-8000-000000000001', 'web-0', 'c1000000-0000-4000-8000-000000000001', '', '0f000000-0000-4000-8000-000000000001', 'u', 'p1', '', 1, '', 1767322800000000, NULL, NULL, 'ACTIVE', '', 0, '{}', '{}', '{}', '');
INSERT INTO nodes VALUES ('d0000001-0000-4000-8000-000000000001', 'web-1', 'c1000000-0000-4000-8000-000000000001', '', '0f000000-0000-4000-8000-000000000001', 'u', 'p1', '', 2, '', 1767322800000000, NULL, NULL, 'ACTIVE', '', 0, '{}', '{}', '{}', '');
INSERT INTO nodes VALUES ('d0000002-0000-4000-8000-000000000001', 'web-2', 'c1000000-0000-4000-8000-000000000001', '', '0f000000-0000-4000-8000-000000000001', 'u', 'p1', '', 3, '', 1767322800000000, NULL, NULL, 'ERROR', '', 0, '{}', '{}', '{}', '');
INSERT INTO actions VALUES ('a0000000-0000-4000-8000-000000000001', 'create', 'c1000000-0000-4000-8000-000000000001', 'c1000000-0000-4000-8000-000000000001', 'CLUSTER_CREATE', 'RPC Request', '', 0, 0, 0, 3600, 'SUCCEEDED', '', '', '{}', '{}', '{}', '', 'u', 'p1', 1767322800000000, NULL);
INSERT INTO actions VALUES ('a1000000-0000-4000-8000-000000000001', 'node_create', 'c1000000-0000-4000-8000-000000000001', 'd0000000-0000-4000-8000-000000000001', 'NODE_CREATE', 'Derived Action', '', 0, 0, 0, 3600, 'SUCCEEDED', '', '', '{}', '{}', '{}', 'a0000000-0000-4000-8000-000000000001', 'u', 'p1', 1767322800000000, NULL);
INSERT INTO actions VALUES ('a1000001-0000-4000-8000-000000000001', 'node_create', 'c1000000-0000-4000-8000-000000000001', 'd0000001-0000-4000-8000-000000000001', 'NODE_CREATE', 'Derived Action', '', 0, 0, 0, 3600, 'SUCCEEDED', '', '', '{}', '{}', '{}', 'a0000000-0000-4000-8000-000000000001', 'u', 'p1', 1767322800000001, NULL);
INSERT INTO actions VALUES ('a1000002-0000-4000-8000-000000000001', 'node_create', 'c1000000-0000-4000-8000-000000000001', 'd0000002-0000-4000-8000-000000000001', 'NODE_CREATE', 'Derived Action', '', 0, 0, 0, 3600, 'FAILED', '', '', '{}', '{}', '{}', 'a0000000-0000-4000-8000-000000000001', 'u', 'p1', 1767322800000002, NULL);
INSERT INTO set_objects VALUES ('web', 'profile', 'gone', 'dead0000-0000-4000-8000-000000000000');
-- Claims written before a claim's reference was resolved (version 19): in
-- project default, cluster db is owned by set ops under its id and claimed
-- by set web under its name and by set batch under a short id; profile pd
-- is claimed by set ops under its name only; two profiles share the name
-- twin, which names neither.
INSERT INTO profiles VALUES ('0f000000-0000-4000-8000-000000000002', 'pd', 'local.process', '1.0', '{}', '{}', '{}', 'u', 'default', '', 1767322800000000, NULL);
INSERT INTO profiles VALUES ('0f000000-0000-4000-8000-000000000003', 'twin', 'local.process', '1.0', '{}', '{}', '{}', 'u', 'default', '', 1767322800000000, NULL);
INSERT INTO profiles VALUES ('0f000000-0000-4000-8000-000000000004', 'twin', 'local.process', '1.0', '{}', '{}', '{}', 'u', 'default', '', 1767322800000000, NULL);
INSERT INTO clusters VALUES ('c5000000-0000-4000-8000-000000000005', 'db', '0f000000-0000-4000-8000-000000000002', 'u', 'default', '', 1767322800000000, NULL, NULL, 0, -1, 0, 1, 3600, 'ACTIVE', '', '{}', '{}', '{}', '{}');
INSERT INTO set_objects VALUES ('ops', 'cluster', 'db', 'c5000000-0000-4000-8000-000000000005');
INSERT INTO set_objects VALUES ('web', 'cluster', 'database', 'db');
INSERT INTO set_objects VALUES ('batch', 'cluster', 'db', 'C5000000-0000');
INSERT INTO set_objects VALUES ('ops', 'profile', 'pd', 'pd');
INSERT INTO set_objects VALUES ('ops', 'profile', 'twin', 'twin');
