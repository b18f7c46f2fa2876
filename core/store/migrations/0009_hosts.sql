-- +goose Up
-- Hosts: where nodes run. Every agent is one (it heartbeats its row), and
-- drivers report theirs (container engines, ESXi hosts, hypervisors). A
-- node of a host-local type (local.process) records its host, and only
-- that host's agent claims the node's actions.
CREATE TABLE hosts (
  name TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  driver TEXT NOT NULL,
  labels TEXT NOT NULL,
  operator_labels TEXT NOT NULL,
  load TEXT NOT NULL,
  state TEXT NOT NULL,
  availability TEXT NOT NULL,
  heartbeat BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT
);
ALTER TABLE nodes ADD COLUMN host TEXT NOT NULL DEFAULT '';
CREATE INDEX nodes_host ON nodes (host);
