//go:build unix

package agent

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f without waiting, so a second agent
// on the same data dir fails at once. The lock goes with the process.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
