package store

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/grovehq/grove/core/model"
)

const nodeCols = "id, name, cluster_id, physical_id, profile_id, usr, project, domain, idx, role, init_at, created_at, updated_at, status, status_reason, tainted, data, metadata, dependents, state, host"

func scanNode(r scanner) (*model.Node, error) {
	n := &model.Node{}
	var initAt int64
	var created, updated sql.NullInt64
	var tainted int
	var data, meta, deps, state string
	if err := r.Scan(&n.ID, &n.Name, &n.ClusterID, &n.PhysicalID, &n.ProfileID, &n.User, &n.Project, &n.Domain, &n.Index, &n.Role,
		&initAt, &created, &updated, &n.Status, &n.StatusReason, &tainted, &data, &meta, &deps, &state, &n.Host); err != nil {
		return nil, err
	}
	n.InitAt, n.CreatedAt, n.UpdatedAt = fromUS(initAt), fromUSPtr(created), fromUSPtr(updated)
	n.Tainted = tainted != 0
	n.Data, n.Metadata, n.Dependents = fromJSON(data), fromJSON(meta), fromJSON(deps)
	if state != "" {
		b, err := base64.StdEncoding.DecodeString(state)
		if err != nil {
			return nil, fmt.Errorf("node %s: driver state is corrupt: %w", n.ID, err)
		}
		n.State = b
	}
	return n, nil
}

func nodeArgs(n *model.Node) []any {
	return []any{n.ID, n.Name, n.ClusterID, n.PhysicalID, n.ProfileID, n.User, n.Project, n.Domain, n.Index, n.Role,
		us(n.InitAt), usPtr(n.CreatedAt), usPtr(n.UpdatedAt), n.Status, n.StatusReason, b2i(n.Tainted),
		toJSON(n.Data), toJSON(n.Metadata), toJSON(n.Dependents), base64.StdEncoding.EncodeToString(n.State), n.Host}
}

// CreateNodes implements Store.
func (s *SQL) CreateNodes(ctx context.Context, nodes []*model.Node) error {
	return s.InTx(ctx, func(tx Store) error {
		t := tx.(*SQL)
		if err := t.insertMany(ctx, "nodes", nodeCols, len(nodes), func(i int) []any { return nodeArgs(nodes[i]) }); err != nil {
			return err
		}
		if err := t.notePhysical(ctx, nodes); err != nil {
			return err
		}
		if err := t.countInserted(ctx, "node_counts", []string{"cluster_id", "status"}, len(nodes), func(i int) ([3]string, bool) {
			return [3]string{nodes[i].ClusterID, nodes[i].Status}, nodes[i].ClusterID != ""
		}); err != nil {
			return err
		}
		return t.bumpNodeChanges(ctx, clustersOf(nodes))
	})
}

// clustersOf returns the clusters nodes belong to, each once, sorted.
func clustersOf(nodes []*model.Node) []string {
	var ids []string
	for _, n := range nodes {
		if n.ClusterID != "" {
			ids = append(ids, n.ClusterID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// bumpNodeChanges moves the node generation (NodeChanges) of each cluster
// named when the transaction it is called in commits. The counters are
// written last, just before the commit, in the order of their ids: a reader
// that sees a new generation sees the writes that moved it, and a writer
// holding a counter row on PostgreSQL (another writer of the cluster waits
// for it until the commit) waits for nothing but other counter rows, taken
// in one order by every writer, so no two writers deadlock over them.
// Outside a transaction the counters are written at once.
func (s *SQL) bumpNodeChanges(ctx context.Context, clusterIDs []string) error {
	if s.changed != nil {
		*s.changed = append(*s.changed, clusterIDs...)
		return nil
	}
	return s.InTx(ctx, func(tx Store) error { return tx.(*SQL).bumpNodeChanges(ctx, clusterIDs) })
}

// writeNodeChanges writes the node generations the transaction moved.
func (s *SQL) writeNodeChanges(ctx context.Context) error {
	ids := *s.changed
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		if id == "" {
			continue
		}
		if _, err := s.exec(ctx, `INSERT INTO node_changes (cluster_id, gen) VALUES (?, 1)
			ON CONFLICT (cluster_id) DO UPDATE SET gen = node_changes.gen + 1`, id); err != nil {
			return fmt.Errorf("record a change of cluster %s's nodes: %w", id, err)
		}
	}
	*s.changed = nil
	return nil
}

// bumpNodeChangesOf is bumpNodeChanges for the clusters of the nodes with
// the given ids, as the store holds them now: called before the nodes are
// written, it names the clusters they leave or are deleted from.
func (s *SQL) bumpNodeChangesOf(ctx context.Context, nodeIDs []string) error {
	in, args := s.idsIn("id", nodeIDs)
	clusters, err := s.ids(ctx, "SELECT DISTINCT cluster_id FROM nodes WHERE "+in+" AND cluster_id <> ''", args...)
	if err != nil {
		return fmt.Errorf("find the clusters of changed nodes: %w", err)
	}
	return s.bumpNodeChanges(ctx, clusters)
}

// NodeChanges implements Store.
func (s *SQL) NodeChanges(ctx context.Context, clusterID string) (int64, error) {
	var gen int64
	err := s.queryRow(ctx, "SELECT gen FROM node_changes WHERE cluster_id = ?", clusterID).Scan(&gen)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the node generation of cluster %s: %w", clusterID, err)
	}
	return gen, nil
}

// GetNode implements Store.
func (s *SQL) GetNode(ctx context.Context, id string) (*model.Node, error) {
	return getOne(ctx, s, "node", "SELECT "+nodeCols+" FROM nodes WHERE id = ?", scanNode, id)
}

// FindNode implements Store.
func (s *SQL) FindNode(ctx context.Context, project, ident string) (n *model.Node, err error) {
	err = s.find(ctx, "node", "nodes", project, ident, func(id string) error { n, err = s.GetNode(ctx, id); return err })
	return n, err
}

// ListNodes implements Store.
func (s *SQL) ListNodes(ctx context.Context, o ListOpts) ([]*model.Node, error) {
	var out []*model.Node
	err := s.list(ctx, "nodes", nodeCols, o, []string{"init_at"}, func(r scanner) (string, error) {
		n, err := scanNode(r)
		if err != nil {
			return "", err
		}
		out = append(out, n)
		return n.ID, nil
	})
	return out, err
}

// physicalLock keys the PostgreSQL advisory locks of PhysicalHolders:
// the high half marks them, the low half is a hash of the physical id, so
// they do not meet migrationLock.
const physicalLock int64 = 0x7068_7973 << 32 // "phys"

// PhysicalHolders implements Store. It finds the ids in node_physical
// (migration 0020) and keeps the rows whose node still holds its id.
func (s *SQL) PhysicalHolders(ctx context.Context, physicalIDs []string) ([]model.PhysicalHolder, error) {
	ids := slices.DeleteFunc(slices.Clone(physicalIDs), func(id string) bool { return id == "" })
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) == 0 {
		return nil, nil
	}
	if s.dialect == "postgres" && s.inTx() {
		// In the ids' order, so that two transactions locking some of
		// the same ids cannot each wait for the other.
		for _, id := range ids {
			h := fnv.New32a()
			h.Write([]byte(id))
			if _, err := s.exec(ctx, "SELECT pg_advisory_xact_lock(?)", physicalLock|int64(h.Sum32())); err != nil {
				return nil, fmt.Errorf("lock physical id %q: %w", id, err)
			}
		}
	}
	in, args := s.idsIn("h.physical_id", ids)
	rows, err := s.query(ctx, `SELECT n.id, n.name, n.project, n.physical_id, COALESCE(p.type, '') FROM node_physical h
		JOIN nodes n ON n.id = h.node_id AND n.physical_id = h.physical_id
		LEFT JOIN profiles p ON p.id = n.profile_id WHERE `+in+` ORDER BY n.physical_id, n.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("find the nodes holding physical ids: %w", err)
	}
	defer rows.Close()
	var out []model.PhysicalHolder
	for rows.Next() {
		var h model.PhysicalHolder
		if err := rows.Scan(&h.NodeID, &h.Name, &h.Project, &h.PhysicalID, &h.ProfileType); err != nil {
			return nil, fmt.Errorf("find the nodes holding physical ids: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// notePhysical records in node_physical the physical id each of nodes
// holds, for PhysicalHolders; nodes without one are skipped (a row of a
// node that gave its id up is ignored by the reads). A row already holding
// the id is not written again.
func (s *SQL) notePhysical(ctx context.Context, nodes []*model.Node) error {
	var held []*model.Node
	for _, n := range nodes {
		if n.PhysicalID != "" {
			held = append(held, n)
		}
	}
	if len(held) == 0 {
		return nil
	}
	err := s.upsertMany(ctx, "node_physical", "node_id, physical_id",
		" ON CONFLICT (node_id) DO UPDATE SET physical_id = excluded.physical_id WHERE node_physical.physical_id <> excluded.physical_id",
		len(held), func(i int) []any { return []any{held[i].ID, held[i].PhysicalID} })
	if err != nil {
		return fmt.Errorf("record the physical ids of %d nodes: %w", len(held), err)
	}
	return nil
}

// PlacedNodes implements Store. The filter on the data's text lets
// through any document with a "host" key (at any depth, or a value that
// reads "host"), so the caller decides from the decoded data; every other
// node's documents are left unread, which is most of what a full read of
// the nodes costs. It still visits every node's row: a host kept in the
// data has no index.
func (s *SQL) PlacedNodes(ctx context.Context) ([]*model.PlacedNode, error) {
	rows, err := s.query(ctx, `SELECT cluster_id, name, status, host, CASE WHEN host = '' THEN data ELSE '' END FROM nodes
		WHERE cluster_id <> '' AND (host <> '' OR data LIKE ?) ORDER BY init_at, id`, `%"host"%`)
	if err != nil {
		return nil, fmt.Errorf("list the placed nodes: %w", err)
	}
	defer rows.Close()
	var out []*model.PlacedNode
	for rows.Next() {
		n := &model.PlacedNode{}
		var data string
		if err := rows.Scan(&n.ClusterID, &n.Name, &n.Status, &n.Host, &data); err != nil {
			return nil, fmt.Errorf("list the placed nodes: %w", err)
		}
		if n.Host == "" {
			n.Data = fromJSON(data)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// nodeViewCols are nodeCols without the driver state, which the API never
// shows: a page does not read (or decode) it.
const nodeViewCols = "id, name, cluster_id, physical_id, profile_id, usr, project, domain, idx, role, init_at, created_at, updated_at, status, status_reason, tainted, data, metadata, dependents, host"

// nodeViewScan scans rows of nodeViewCols. Its destinations are its own
// fields, made once for a page, so scanning a row allocates only what the
// node keeps (the driver's strings, the documents' bytes).
type nodeViewScan struct {
	v                    model.NodeView
	initAt               int64
	created, updated     sql.NullInt64
	tainted              int
	data, meta, deps     sql.RawBytes
	dest                 []any
	createdAt, updatedAt []time.Time
	// docs holds the documents of the nodes scanned: a page of nodes
	// takes one allocation for all of them rather than three per node.
	docs []byte
}

// newNodeViewScan scans rows (RawBytes documents, valid until the next
// row) when rows is set, else one Row (which copies them).
func newNodeViewScan(rows bool, size int) *nodeViewScan {
	sc := &nodeViewScan{docs: make([]byte, 0, 256*size), createdAt: make([]time.Time, 0, size), updatedAt: make([]time.Time, 0, size)}
	v := &sc.v
	sc.dest = []any{&v.ID, &v.Name, &v.ClusterID, &v.PhysicalID, &v.ProfileID, &v.User, &v.Project, &v.Domain, &v.Index, &v.Role,
		&sc.initAt, &sc.created, &sc.updated, &v.Status, &v.StatusReason, &sc.tainted, &sc.data, &sc.meta, &sc.deps, &v.Host}
	if !rows {
		sc.dest[16], sc.dest[17], sc.dest[18] = (*[]byte)(&sc.data), (*[]byte)(&sc.meta), (*[]byte)(&sc.deps)
	}
	return sc
}

// scan scans the row into n.
func (sc *nodeViewScan) scan(r scanner, n *model.NodeView) error {
	if err := r.Scan(sc.dest...); err != nil {
		return err
	}
	*n = sc.v
	n.InitAt = fromUS(sc.initAt)
	n.CreatedAt, n.UpdatedAt = sc.time(&sc.createdAt, sc.created), sc.time(&sc.updatedAt, sc.updated)
	n.Tainted = sc.tainted != 0
	n.Data, n.Metadata, n.Dependents = sc.object(sc.data), sc.object(sc.meta), sc.object(sc.deps)
	return nil
}

// time is fromUSPtr, its times allocated together in *block.
func (sc *nodeViewScan) time(block *[]time.Time, v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	if len(*block) == cap(*block) {
		*block = make([]time.Time, 0, max(16, cap(*block)))
	}
	*block = append(*block, fromUS(v.Int64))
	return &(*block)[len(*block)-1]
}

// object is a stored JSON document as the API passes it on: a copy of the
// stored bytes when they hold a JSON object, else {} — what decoding them
// into a map (fromJSON) and encoding that shows for a document that is
// empty, null or not an object.
func (sc *nodeViewScan) object(b []byte) json.RawMessage {
	if len(b) < 2 || b[0] != '{' || string(b) == "{}" || !json.Valid(b) {
		b = []byte("{}") // does not escape: appended below
	}
	start := len(sc.docs)
	sc.docs = append(sc.docs, b...)
	return sc.docs[start:len(sc.docs):len(sc.docs)]
}

// ListNodeViews implements Store. The nodes of a page are allocated
// together (see nodeViewScan).
func (s *SQL) ListNodeViews(ctx context.Context, o ListOpts) ([]*model.NodeView, error) {
	size := 100
	if o.Limit > 0 {
		size = min(o.Limit, 1000)
	}
	sc := newNodeViewScan(true, size)
	block := make([]model.NodeView, 0, size)
	var out []*model.NodeView
	err := s.list(ctx, "nodes", nodeViewCols, o, []string{"init_at"}, func(r scanner) (string, error) {
		if len(block) == cap(block) {
			block = make([]model.NodeView, 0, size)
		}
		block = block[:len(block)+1]
		n := &block[len(block)-1]
		if err := sc.scan(r, n); err != nil {
			return "", err
		}
		out = append(out, n)
		return n.ID, nil
	})
	return out, err
}

// FindNodeView implements Store.
func (s *SQL) FindNodeView(ctx context.Context, project, ident string) (n *model.NodeView, err error) {
	err = s.find(ctx, "node", "nodes", project, ident, func(id string) error {
		n, err = getOne(ctx, s, "node", "SELECT "+nodeViewCols+" FROM nodes WHERE id = ?", func(r scanner) (*model.NodeView, error) {
			v := &model.NodeView{}
			return v, newNodeViewScan(false, 1).scan(r, v)
		}, id)
		return err
	})
	return n, err
}

func (s *SQL) nodesWhere(ctx context.Context, where string, args ...any) ([]*model.Node, error) {
	rows, err := s.query(ctx, "SELECT "+nodeCols+" FROM nodes WHERE "+where, args...)
	if err != nil {
		return nil, fmt.Errorf("query nodes: %w", err)
	}
	defer rows.Close()
	var out []*model.Node
	for rows.Next() {
		n, err := scanNode(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// ClusterNodes implements Store.
func (s *SQL) ClusterNodes(ctx context.Context, clusterID string) ([]*model.Node, error) {
	return s.nodesWhere(ctx, "cluster_id = ? ORDER BY idx, id", clusterID)
}

// ClusterHostNodes implements Store.
// The range on host walks the nodes_host index: a cluster with no node
// on a host (most clusters; every cluster of an agent without host-local
// profiles) costs an empty range, not a read of its rows. The few rows
// found are ordered here.
func (s *SQL) ClusterHostNodes(ctx context.Context, clusterID string) ([]*model.Node, error) {
	// SQLite's planner, without statistics, prefers the cluster's index
	// (an equality) to the range, so it is told; PostgreSQL's statistics
	// choose.
	from := "nodes"
	if s.dialect == "sqlite" {
		from = "nodes INDEXED BY nodes_host"
	}
	rows, err := s.query(ctx, "SELECT "+nodeCols+" FROM "+from+" WHERE host > '' AND cluster_id = ?", clusterID)
	if err != nil {
		return nil, fmt.Errorf("query the nodes on hosts of cluster %s: %w", clusterID, err)
	}
	defer rows.Close()
	var nodes []*model.Node
	for rows.Next() {
		n, err := scanNode(rows)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(nodes, func(a, b *model.Node) int { return cmp.Or(cmp.Compare(a.Index, b.Index), strings.Compare(a.ID, b.ID)) })
	return nodes, nil
}

// CheckNodes implements Store. A round reads every node of the cluster,
// so the scan allocates little: the columns that repeat (status, profile,
// host) are scanned as bytes and take a string shared by every node with
// the same value, and data and metadata keep the stored JSON.
func (s *SQL) CheckNodes(ctx context.Context, clusterID string) ([]*model.CheckNode, error) {
	rows, err := s.query(ctx, "SELECT id, name, physical_id, profile_id, idx, status, data, metadata, state, host FROM nodes WHERE cluster_id = ? ORDER BY idx, id", clusterID)
	if err != nil {
		return nil, fmt.Errorf("query the nodes of cluster %s: %w", clusterID, err)
	}
	defer rows.Close()
	var out []*model.CheckNode
	var profile, status, data, meta, state, host sql.RawBytes
	shared := map[string]string{}
	intern := func(b []byte) string {
		if v, ok := shared[string(b)]; ok {
			return v
		}
		v := string(b)
		shared[v] = v
		return v
	}
	for rows.Next() {
		n := &model.CheckNode{ClusterID: clusterID}
		if err := rows.Scan(&n.ID, &n.Name, &n.PhysicalID, &profile, &n.Index, &status, &data, &meta, &state, &host); err != nil {
			return nil, fmt.Errorf("read the nodes of cluster %s: %w", clusterID, err)
		}
		n.ProfileID, n.Status, n.Host = intern(profile), intern(status), intern(host)
		if len(data) > 0 && string(data) != "{}" {
			n.Data = bytes.Clone(data)
		}
		if len(meta) > 0 && string(meta) != "{}" {
			n.Metadata = bytes.Clone(meta)
		}
		if len(state) > 0 {
			n.State = make([]byte, base64.StdEncoding.DecodedLen(len(state)))
			k, err := base64.StdEncoding.Decode(n.State, state)
			if err != nil {
				return nil, fmt.Errorf("node %s: driver state is corrupt: %w", n.ID, err)
			}
			n.State = n.State[:k]
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// GetNodes implements Store; missing ids are skipped.
func (s *SQL) GetNodes(ctx context.Context, ids []string) ([]*model.Node, error) {
	var out []*model.Node
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		in, args := s.idsIn("id", chunk)
		ns, err := s.nodesWhere(ctx, in, args...)
		if err != nil {
			return nil, err
		}
		out = append(out, ns...)
	}
	return out, nil
}

// UpdateNodes implements Store. One prepared statement serves the batch.
func (s *SQL) UpdateNodes(ctx context.Context, nodes []*model.Node) error {
	if len(nodes) == 0 {
		return nil
	}
	return s.InTx(ctx, func(tx Store) error {
		t := tx.(*SQL)
		// A node that leaves a cluster for another changes its old one
		// too. SQLite's trigger moves the old cluster's generation
		// (migration 0014: SQLite has one writer, so a counter written
		// mid-transaction holds no one up); PostgreSQL's update returns
		// the old cluster, whose counter is written with the others at
		// the commit. Reading the nodes' clusters before the update
		// instead cost creation a tenth of its speed on SQLite: two more
		// index lookups per node.
		q := `UPDATE nodes SET name = ?, cluster_id = ?, physical_id = ?, profile_id = ?, usr = ?, project = ?, domain = ?, idx = ?, role = ?,
			init_at = ?, created_at = ?, updated_at = ?, status = ?, status_reason = ?, tainted = ?, data = ?, metadata = ?, dependents = ?, state = ?, host = ? WHERE id = ?`
		returning := t.dialect == "postgres"
		if returning {
			q = `UPDATE nodes SET name = ?, cluster_id = ?, physical_id = ?, profile_id = ?, usr = ?, project = ?, domain = ?, idx = ?, role = ?,
			init_at = ?, created_at = ?, updated_at = ?, status = ?, status_reason = ?, tainted = ?, data = ?, metadata = ?, dependents = ?, state = ?, host = ?
			FROM (SELECT cluster_id AS was FROM nodes WHERE id = ?) AS old WHERE nodes.id = ? RETURNING old.was`
		}
		stmt, err := t.q.(*sql.Tx).PrepareContext(ctx, t.rebind(q))
		if err != nil {
			return fmt.Errorf("prepare node update: %w", err)
		}
		defer stmt.Close()
		var left []string
		for _, n := range nodes {
			args := append(nodeArgs(n)[1:], n.ID)
			if !returning {
				if _, err := stmt.ExecContext(ctx, args...); err != nil {
					return fmt.Errorf("update node %s: %w", n.ID, err)
				}
				continue
			}
			var was string
			err := stmt.QueryRowContext(ctx, append(args, n.ID)...).Scan(&was)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("update node %s: %w", n.ID, err)
			}
			if was != n.ClusterID {
				left = append(left, was)
			}
		}
		if err := t.notePhysical(ctx, nodes); err != nil {
			return err
		}
		if err := t.bumpNodeChanges(ctx, left); err != nil {
			return err
		}
		return t.bumpNodeChanges(ctx, clustersOf(nodes))
	})
}

// RecordNodeResults implements Store. After a create it is most of a
// node's second write: UpdateNodes would also rewrite the entries of the
// name, cluster, index and host indexes, for values that did not change.
// One statement writes up to 500 nodes, joined on their id: on
// PostgreSQL a statement per node cost a round trip each, which made
// creation there take 1.7× as long as on SQLite.
func (s *SQL) RecordNodeResults(ctx context.Context, nodes []*model.Node) error {
	if len(nodes) == 0 {
		return nil
	}
	return s.batchTx(ctx, func(t *SQL) error {
		var clusters []string
		for start := 0; start < len(nodes); start += 500 {
			chunk := nodes[start:min(start+500, len(nodes))]
			var got []string
			var err error
			if t.dialect == "postgres" {
				got, err = t.recordResultArrays(ctx, chunk)
			} else {
				rows := make([]string, len(chunk))
				args := make([]any, 0, 8*len(chunk))
				for i, n := range chunk {
					rows[i] = "(?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT), ?, ?, ?, ?)"
					args = append(args, n.ID, n.PhysicalID, usPtr(n.CreatedAt), usPtr(n.UpdatedAt), n.Status, n.StatusReason,
						toJSON(n.Data), base64.StdEncoding.EncodeToString(n.State))
				}
				got, err = t.ids(ctx, `WITH r (id, physical_id, created_at, updated_at, status, status_reason, data, state) AS (VALUES `+strings.Join(rows, ", ")+`)
				UPDATE nodes SET physical_id = r.physical_id, created_at = r.created_at, updated_at = r.updated_at,
					status = r.status, status_reason = r.status_reason, data = r.data, state = r.state
				FROM r WHERE nodes.id = r.id RETURNING nodes.cluster_id`, args...)
			}
			if err != nil {
				return fmt.Errorf("record the results of %d nodes: %w", len(chunk), err)
			}
			if err := t.notePhysical(ctx, chunk); err != nil {
				return err
			}
			clusters = append(clusters, got...)
		}
		// Repeats are fine: the generations are written once each, at
		// the commit (writeNodeChanges).
		return t.bumpNodeChanges(ctx, clusters)
	})
}

// recordResultArrays is RecordNodeResults' statement on PostgreSQL: the
// results go as one array per column (as insertArrays' rows do), and the
// ids are listed for the nodes too: without the list PostgreSQL joined
// the results to every node, reading the whole table for each batch (a
// hash join over a sequential scan), so a create of n nodes cost n².
func (s *SQL) recordResultArrays(ctx context.Context, nodes []*model.Node) ([]string, error) {
	ids, physical, reasons, statuses, data, states := make([]string, len(nodes)), make([]string, len(nodes)), make([]string, len(nodes)),
		make([]string, len(nodes)), make([]string, len(nodes)), make([]string, len(nodes))
	created, updated := make([]any, len(nodes)), make([]any, len(nodes))
	for i, n := range nodes {
		ids[i], physical[i], created[i], updated[i], statuses[i], reasons[i] = n.ID, n.PhysicalID, usPtr(n.CreatedAt), usPtr(n.UpdatedAt), n.Status, n.StatusReason
		data[i], states[i] = toJSON(n.Data), base64.StdEncoding.EncodeToString(n.State)
	}
	return s.ids(ctx, `UPDATE nodes SET physical_id = r.physical_id, created_at = r.created_at, updated_at = r.updated_at,
			status = r.status, status_reason = r.status_reason, data = r.data, state = r.state
		FROM unnest(CAST(? AS text[]), CAST(? AS text[]), CAST(? AS bigint[]), CAST(? AS bigint[]), CAST(? AS text[]), CAST(? AS text[]), CAST(? AS text[]), CAST(? AS text[]))
			AS r (id, physical_id, created_at, updated_at, status, status_reason, data, state)
		WHERE nodes.id = r.id AND nodes.id = ANY(?) RETURNING nodes.cluster_id`,
		ids, physical, created, updated, statuses, reasons, data, states, ids)
}

// SetNodeStatus implements Store.
func (s *SQL) SetNodeStatus(ctx context.Context, ids []string, status, reason string) error {
	return s.InTx(ctx, func(tx Store) error {
		t := tx.(*SQL)
		for start := 0; start < len(ids); start += 500 {
			chunk := ids[start:min(start+500, len(ids))]
			// The update names the clusters it changed: no second look
			// at the rows.
			in, args := t.idsIn("id", chunk)
			clusters, err := t.ids(ctx, "UPDATE nodes SET status = ?, status_reason = ? WHERE "+in+" RETURNING cluster_id",
				append([]any{status, reason}, args...)...)
			if err != nil {
				return fmt.Errorf("set node status: %w", err)
			}
			if err := t.bumpNodeChanges(ctx, clusters); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteNodes implements Store.
func (s *SQL) DeleteNodes(ctx context.Context, ids []string) error {
	return s.InTx(ctx, func(tx Store) error {
		t := tx.(*SQL)
		for start := 0; start < len(ids); start += 500 {
			chunk := ids[start:min(start+500, len(ids))]
			// Before the delete, while the rows still name their clusters.
			if err := t.bumpNodeChangesOf(ctx, chunk); err != nil {
				return err
			}
			in, args := t.idsIn("id", chunk)
			if _, err := t.exec(ctx, "DELETE FROM nodes WHERE "+in, args...); err != nil {
				return fmt.Errorf("delete nodes: %w", err)
			}
			in, args = t.idsIn("node_id", chunk)
			if _, err := t.exec(ctx, "DELETE FROM node_locks WHERE "+in, args...); err != nil {
				return fmt.Errorf("delete node locks: %w", err)
			}
			if _, err := t.exec(ctx, "DELETE FROM node_physical WHERE "+in, args...); err != nil {
				return fmt.Errorf("delete the physical ids of nodes: %w", err)
			}
		}
		return nil
	})
}

// CountNodes implements Store.
func (s *SQL) CountNodes(ctx context.Context, clusterID string) (int, error) {
	var n int
	err := s.queryRow(ctx, "SELECT COUNT(*) FROM nodes WHERE cluster_id = ?", clusterID).Scan(&n)
	return n, err
}

// ClusterNodeIDs implements Store.
func (s *SQL) ClusterNodeIDs(ctx context.Context, clusterID string, limit int) ([]string, error) {
	ids, err := s.ids(ctx, "SELECT id FROM nodes WHERE cluster_id = ? ORDER BY idx, id LIMIT ?", clusterID, limit)
	if err != nil {
		return nil, fmt.Errorf("list node ids of cluster %s: %w", clusterID, err)
	}
	return ids, nil
}

// CountNodesByStatus implements Store. It reads the counts migration 0013
// keeps up to date (node_counts), a few rows per status whatever the
// cluster's size, not the nodes.
func (s *SQL) CountNodesByStatus(ctx context.Context, clusterID string) (map[string]int, error) {
	rows, err := s.query(ctx, "SELECT status, CAST(SUM(n) AS BIGINT), COUNT(*) FROM node_counts WHERE cluster_id = ? GROUP BY status", clusterID)
	if err != nil {
		return nil, fmt.Errorf("count nodes of cluster %s: %w", clusterID, err)
	}
	defer rows.Close()
	out := map[string]int{}
	deltas := 0
	for rows.Next() {
		var st string
		var n, k int
		if err := rows.Scan(&st, &n, &k); err != nil {
			return nil, fmt.Errorf("count nodes of cluster %s: %w", clusterID, err)
		}
		if n != 0 {
			out[st] = n
		}
		deltas += k - 1
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count nodes of cluster %s: %w", clusterID, err)
	}
	rows.Close()
	s.compactCounts(ctx, deltas, `WITH gone AS (DELETE FROM node_counts WHERE cluster_id = ? RETURNING status, n)
		INSERT INTO node_counts (cluster_id, status, n) SELECT CAST(? AS TEXT), status, SUM(n) FROM gone GROUP BY status HAVING SUM(n) <> 0`, clusterID, clusterID)
	return out, nil
}
