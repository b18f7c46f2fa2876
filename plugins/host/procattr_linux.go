package host

import "syscall"

// dieWithParent makes a plugin process die with the agent (Linux's
// parent-death signal), so a killed agent leaves no plugin behind.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
