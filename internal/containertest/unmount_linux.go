package containertest

import "syscall"

// unmount unmounts a directory Podman mounted, if it is mounted.
func unmount(dir string) { _ = syscall.Unmount(dir, 0) }
