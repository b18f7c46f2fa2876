package hcl

import (
	"fmt"

	hclv2 "github.com/hashicorp/hcl/v2"

	"github.com/grovehq/grove/api"
)

// defaultMaxNodesPerCluster is the agent's default node limit per cluster
// (workers.max_nodes_per_cluster). An agent may be configured with another,
// so going over it is a warning, not an error.
const defaultMaxNodesPerCluster = 100000

// checkSizes applies the rules the API applies to a new cluster's sizes and
// timeout (core/engine CreateCluster and scaling.CheckSizeParams), each at
// the attribute at fault, so that a definition that validates also applies.
func checkSizes(c *Cluster, attrs hclv2.Attributes) hclv2.Diagnostics {
	var diags hclv2.Diagnostics
	at := func(field string) *hclv2.Range { return attrs[field].Expr.Range().Ptr() }
	bad := func(field, format string, args ...any) {
		diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid cluster size",
			Detail: fmt.Sprintf(format, args...), Subject: at(field)})
	}
	if c.DesiredCapacity != nil && (*c.DesiredCapacity < 0 || *c.DesiredCapacity > api.MaxCount) {
		bad("desired_capacity", "desired_capacity must be a non-negative integer of at most %d, got %d.", api.MaxCount, *c.DesiredCapacity)
	}
	if c.MinSize != nil && (*c.MinSize < 0 || *c.MinSize > api.MaxCount) {
		bad("min_size", "min_size must be a non-negative integer of at most %d, got %d.", api.MaxCount, *c.MinSize)
	}
	if c.MaxSize != nil && (*c.MaxSize < -1 || *c.MaxSize > api.MaxCount) {
		bad("max_size", "max_size must be -1 (unlimited) or a non-negative integer of at most %d, got %d.", api.MaxCount, *c.MaxSize)
	}
	if c.Timeout != nil {
		switch t := int64(*c.Timeout); {
		case t < 0:
			diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid timeout",
				Detail: fmt.Sprintf("timeout must be a non-negative number of seconds, got %d.", t), Subject: at("timeout")})
		case t > api.MaxTimeout:
			diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid timeout",
				Detail: fmt.Sprintf("timeout must be at most %d seconds, got %d.", api.MaxTimeout, t), Subject: at("timeout")})
		}
	}
	if diags.HasErrors() {
		return diags
	}
	// As the API does: desired_capacity defaults to min_size, then 0.
	desired, desiredField := 0, ""
	switch {
	case c.DesiredCapacity != nil:
		desired, desiredField = *c.DesiredCapacity, "desired_capacity"
	case c.MinSize != nil:
		desired = *c.MinSize
	}
	limited := c.MaxSize != nil && *c.MaxSize >= 0
	if c.MinSize != nil && limited && *c.MinSize > *c.MaxSize {
		bad("min_size", "min_size (%d) must not be greater than max_size (%d).", *c.MinSize, *c.MaxSize)
	}
	if desiredField != "" && c.MinSize != nil && desired < *c.MinSize {
		bad("desired_capacity", "desired_capacity (%d) must not be less than min_size (%d).", desired, *c.MinSize)
	}
	if desiredField != "" && limited && desired > *c.MaxSize {
		bad("desired_capacity", "desired_capacity (%d) must not be greater than max_size (%d).", desired, *c.MaxSize)
	}
	over := func(field string, n int) {
		diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagWarning, Summary: "Cluster larger than an agent allows by default",
			Detail: fmt.Sprintf("%s is %d, more than %d, the nodes an agent allows per cluster unless its workers.max_nodes_per_cluster is raised; such an agent refuses the cluster.",
				field, n, defaultMaxNodesPerCluster), Subject: at(field)})
	}
	if desired > defaultMaxNodesPerCluster {
		if desiredField == "" {
			desiredField = "min_size"
		}
		over(desiredField, desired)
	}
	if c.MaxSize != nil && *c.MaxSize > defaultMaxNodesPerCluster {
		over("max_size", *c.MaxSize)
	}
	return diags
}
