//go:build !linux

package host

import "syscall"

// dieWithParent returns nil: only Linux has a parent-death signal, so
// elsewhere a plugin outlives a killed agent until it notices its broken
// connection.
func dieWithParent() *syscall.SysProcAttr { return nil }
