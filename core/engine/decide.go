package engine

import (
	"fmt"
	"math/rand/v2"
	"regexp"
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

// nameDirective is a node.name.format directive, as Senlin's
// format_node_name reads it: "$", a width of up to eight digits (optional),
// and R, r or I.
var nameDirective = regexp.MustCompile(`\$(\d{0,8})([rRI])`)

// maxNameLen is the longest valid name (model.ValidateName); a wider
// directive is cut to it rather than building a name no one can use.
const maxNameLen = 255

// NodeName expands a node.name.format as Senlin does: $nR is n random
// letters and digits starting with a letter, $nr the same in lower case, and
// $nI the index zero-padded to n digits. Without a width, $R and $r are 8
// characters and $I is the index unpadded. Anything else is literal; an
// empty format is "node-$8R".
func NodeName(format string, index int, rng *rand.Rand) string {
	if format == "" {
		format = "node-$8R"
	}
	return nameDirective.ReplaceAllStringFunc(format, func(d string) string {
		kind, digits := d[len(d)-1], d[1:len(d)-1]
		width := -1
		if digits != "" {
			width, _ = strconv.Atoi(digits)
			width = min(width, maxNameLen)
		}
		if kind == 'I' {
			if width < 0 {
				return strconv.Itoa(index)
			}
			return fmt.Sprintf("%0*d", width, index)
		}
		if width < 0 {
			width = 8
		}
		name := randomName(rng, width)
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
