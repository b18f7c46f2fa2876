package engine

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/grovehq/grove/core/model"
)

// EvalStatus is Senlin's eval_status as a pure function: from the number of
// ACTIVE nodes and the size settings it returns the cluster's status and
// reason, prefixed with the operation that led there.
func EvalStatus(op string, active, desired, minSize, maxSize int) (string, string) {
	switch {
	case active < minSize:
		return model.ClusterError, fmt.Sprintf("%s: number of active nodes is below min_size (%d).", op, minSize)
	case active < desired:
		return model.ClusterWarning, fmt.Sprintf("%s: number of active nodes is below desired_capacity (%d).", op, desired)
	case maxSize < 0 || active <= maxSize:
		return model.ClusterActive, fmt.Sprintf("%s: number of active nodes is equal or above desired_capacity (%d).", op, desired)
	}
	return model.ClusterWarning, fmt.Sprintf("%s: number of active nodes is above max_size (%d).", op, maxSize)
}

// NodeName expands a node.name.format: $nR is n random letters and digits,
// $nr n random lower-case letters and digits, $nI the index zero-padded to n.
func NodeName(format string, index int, rng *rand.Rand) string {
	if format == "" {
		format = "node-$8R"
	}
	const upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	const lower = "abcdefghijklmnopqrstuvwxyz0123456789"
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '$' {
			b.WriteByte(format[i])
			continue
		}
		j := i + 1
		for j < len(format) && format[j] >= '0' && format[j] <= '9' {
			j++
		}
		if j == i+1 || j >= len(format) {
			b.WriteByte('$')
			continue
		}
		n, _ := strconv.Atoi(format[i+1 : j])
		switch format[j] {
		case 'R', 'r':
			set := upper
			if format[j] == 'r' {
				set = lower
			}
			for k := 0; k < n; k++ {
				b.WriteByte(set[rng.IntN(len(set))])
			}
		case 'I':
			fmt.Fprintf(&b, "%0*d", n, index)
		default:
			b.WriteString(format[i : j+1])
		}
		i = j
	}
	return b.String()
}
