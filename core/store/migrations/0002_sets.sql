-- +goose Up
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
