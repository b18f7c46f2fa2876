// Package examples ships the HCL examples inside the grove binary, so
// `grove quickstart` works from any directory.
package examples

import "embed"

// Quickstart is examples/hcl/quickstart.
//
//go:embed quickstart/*.hcl
var Quickstart embed.FS
