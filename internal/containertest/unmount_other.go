//go:build !linux

package containertest

// unmount does nothing where Podman's storage mounts nothing of its own.
func unmount(string) {}
