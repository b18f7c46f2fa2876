package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/grovehq/grove/api"
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

// NodeName expands a node.name.format as Senlin does: $nR is n random
// letters and digits starting with a letter, $nr the same in lower case, and
// $nI the index zero-padded to n digits. Without a width, $R and $r are 8
// characters and $I is the index unpadded. Anything else is literal; an
// empty format is "node-$8R".
func NodeName(format string, index int, rng *rand.Rand) string {
	if format == "" {
		format = "node-$8R"
	}
	return api.NodeNameDirective.ReplaceAllStringFunc(format, func(d string) string {
		kind, digits := d[len(d)-1], d[1:len(d)-1]
		longest, shortest := api.NodeNameWidth(digits, kind)
		if kind == 'I' {
			// The index zero-padded to the directive's width, which is
			// the shortest it expands to (1 without a width: unpadded);
			// NodeNameWidth cuts a wider one to the longest valid name.
			return fmt.Sprintf("%0*d", shortest, index)
		}
		name := randomName(rng, longest) // $R and $r are exactly their width
		if kind == 'r' {
			name = strings.ToLower(name)
		}
		return name
	})
}

// randomName is Senlin's random_name: a letter, then letters and digits.
func randomName(rng *rand.Rand, n int) string {
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	const alnum = letters + "0123456789"
	b := make([]byte, n)
	for i := range b {
		set := alnum
		if i == 0 {
			set = letters
		}
		b[i] = set[rng.IntN(len(set))]
	}
	return string(b)
}
