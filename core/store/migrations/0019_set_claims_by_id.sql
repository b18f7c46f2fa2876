-- +goose Up
-- Ownership records hold the id of the object they name. Before Grove
-- resolved a claim's reference, a claim by name or short id was kept as
-- written, so one cluster could be owned by several sets, one record under
-- its id and others under its name or short id, each blind to the others.
-- Each such record is moved to the id it names, resolved as the API
-- resolves a reference within the record's project: a name first, then a
-- short id of at least 6 characters, each only when exactly one object
-- matches. Where the object already has a record under its id, that
-- record is the owner and the others are dropped; where several records
-- name it by name or short id only, the one whose reference sorts first is
-- kept. A record naming nothing (its object deleted) is left as it is.
CREATE TEMPORARY TABLE set_object_targets AS
SELECT kind, id, name, project FROM (
  SELECT 'profile' AS kind, id, name, project FROM profiles
  UNION ALL SELECT 'policy', id, name, project FROM policies
  UNION ALL SELECT 'cluster', id, name, project FROM clusters
) AS t;

CREATE TEMPORARY TABLE set_object_refs AS
SELECT so.kind, so.object_id AS ref,
  COALESCE(
    (SELECT min(t.id) FROM set_object_targets t
      WHERE t.kind = so.kind AND t.project = so.project AND t.name = so.object_id
      HAVING count(*) = 1),
    (SELECT min(t.id) FROM set_object_targets t
      WHERE t.kind = so.kind AND t.project = so.project AND length(so.object_id) >= 6
        AND substr(t.id, 1, length(so.object_id)) = lower(so.object_id)
        AND NOT EXISTS (SELECT 1 FROM set_object_targets n
          WHERE n.kind = so.kind AND n.project = so.project AND n.name = so.object_id)
      HAVING count(*) = 1)
  ) AS id
FROM set_objects so
WHERE NOT EXISTS (SELECT 1 FROM set_object_targets t WHERE t.kind = so.kind AND t.id = so.object_id);

DELETE FROM set_object_refs WHERE id IS NULL;

-- A record by reference whose object has a record by id, or another record
-- by a reference that sorts first, gives way.
DELETE FROM set_objects WHERE EXISTS (
  SELECT 1 FROM set_object_refs r
  WHERE r.kind = set_objects.kind AND r.ref = set_objects.object_id
    AND (EXISTS (SELECT 1 FROM set_objects o WHERE o.kind = r.kind AND o.object_id = r.id)
      OR EXISTS (SELECT 1 FROM set_object_refs r2 WHERE r2.kind = r.kind AND r2.id = r.id AND r2.ref < r.ref)));

UPDATE set_objects SET object_id = (
  SELECT r.id FROM set_object_refs r WHERE r.kind = set_objects.kind AND r.ref = set_objects.object_id)
WHERE EXISTS (SELECT 1 FROM set_object_refs r WHERE r.kind = set_objects.kind AND r.ref = set_objects.object_id);

DROP TABLE set_object_refs;
DROP TABLE set_object_targets;
