-- +goose Up
-- The physical id each node holds, kept beside nodes so that the nodes
-- holding an id are found through an index: a driver's results are
-- checked against the resources other nodes already hold (two nodes on
-- one resource would both act on it, and deleting either would destroy
-- the other's), and so is an adoption. An index on nodes.physical_id would
-- serve the same reads, but on PostgreSQL a node's result write would then
-- change an indexed column and stop being heap-only (migration 0018),
-- writing an entry in every index of nodes: about a fifth more server time
-- per node created. This narrow table is written once per node that gets
-- an id. A row whose node no longer holds its id (deleted with the node,
-- or replaced by a recreate) is ignored by the reads, which join nodes on
-- both columns; a node's rows go with it.
CREATE TABLE node_physical (
  node_id TEXT PRIMARY KEY,
  physical_id TEXT NOT NULL
);
CREATE INDEX node_physical_id ON node_physical (physical_id);
INSERT INTO node_physical (node_id, physical_id) SELECT id, physical_id FROM nodes WHERE physical_id <> '';
