package placement

import (
	"fmt"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// constraintEnv is what a constraint expression sees of a host. Label keys
// with dots or slashes are read by index: labels["kubernetes.io/arch"].
// A label the host lacks reads as "", so `labels.ssd == "true"` is simply
// false on a host without it.
type constraintEnv struct {
	Name   string            `expr:"name"`
	Labels map[string]string `expr:"labels"`
}

// compileConstraints compiles a constraint once per decision; it is then
// run per host. expr-lang/expr is used rather than a hand-written parser:
// it is maintained, type-checks the expression against constraintEnv at
// compile time (so an unknown name or a non-boolean result is refused
// when the policy is created, with the position of the fault), and runs a
// compiled program without reflection on each host. An empty expression is
// nil: every host satisfies it.
func compileConstraints(src string) (*vm.Program, error) {
	if src == "" {
		return nil, nil
	}
	p, err := expr.Compile(src, expr.Env(constraintEnv{}), expr.AsBool())
	if err != nil {
		return nil, fmt.Errorf("the expression does not compile (it reads a host's name and labels and must be true or false): %w", err)
	}
	return p, nil
}

// satisfies runs a compiled constraint on a host. A run-time failure
// counts as a violation with its reason.
func satisfies(p *vm.Program, h *Host) (bool, error) {
	if p == nil {
		return true, nil
	}
	labels := h.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	out, err := expr.Run(p, constraintEnv{Name: h.Name, Labels: labels})
	if err != nil {
		return false, err
	}
	ok, _ := out.(bool)
	return ok, nil
}
