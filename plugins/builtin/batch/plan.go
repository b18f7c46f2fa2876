package batch

// Node is a cluster member as the batch plan sees it.
type Node struct {
	ID     string
	Status string
	// Tainted nodes go first, as nodes in error do.
	Tainted bool
	// Created is false for a node never created (Senlin's created_at is
	// None).
	Created bool
}

// Size is how many nodes one batch updates, Senlin's rule for N nodes:
// half of them rounded up, or all but min_in_service when there are more
// than min_in_service, then at most max_batch_size (-1: no cap).
func Size(total, minInService, maxBatchSize int) int {
	size := (total + 1) / 2
	if total > minInService {
		size = total - minInService
	}
	if maxBatchSize != -1 && size >= maxBatchSize {
		size = maxBatchSize
	}
	return size
}

// Plan orders the nodes as Senlin's filter_error_nodes does (those in
// ERROR or WARNING or tainted first, then those never created, then the
// rest, each group in the cluster's order) and cuts them into consecutive
// batches of Size. A cluster with no node has an empty plan. Updating
// nodes known to be bad first gives min_in_service its best chance.
func Plan(nodes []Node, minInService, maxBatchSize int) [][]string {
	if len(nodes) == 0 {
		return [][]string{}
	}
	var bad, uncreated, good []string
	for _, n := range nodes {
		switch {
		case n.Status == "ERROR" || n.Status == "WARNING" || n.Tainted:
			bad = append(bad, n.ID)
		case !n.Created:
			uncreated = append(uncreated, n.ID)
		default:
			good = append(good, n.ID)
		}
	}
	order := append(append(bad, uncreated...), good...)
	size := Size(len(nodes), minInService, maxBatchSize)
	var plan [][]string
	for i := 0; i < len(order); i += size {
		plan = append(plan, order[i:min(i+size, len(order))])
	}
	return plan
}
