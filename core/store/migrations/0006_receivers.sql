-- +goose Up
-- Receivers (Senlin's webhooks): what an outside caller may start on a
-- cluster. The webhook's secret is never stored, only its SHA-256 (hex),
-- which is what a trigger is looked up by, as for tokens.
CREATE TABLE receivers (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  cluster_id TEXT NOT NULL,
  action TEXT NOT NULL,
  actor TEXT NOT NULL,
  params TEXT NOT NULL,
  channel TEXT NOT NULL,
  hash TEXT NOT NULL,
  usr TEXT NOT NULL,
  project TEXT NOT NULL,
  domain TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT
);
CREATE UNIQUE INDEX receivers_hash ON receivers (hash);
CREATE INDEX receivers_name ON receivers (name);
CREATE INDEX receivers_cluster ON receivers (cluster_id);
