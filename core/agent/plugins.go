package agent

import (
	"fmt"
	"path/filepath"
)

// pluginCommand resolves a plugin block's command against the plugin dir and
// refuses a binary outside it, whether the path climbs out ("../x", an
// absolute path elsewhere) or a symbolic link in the dir points out of it:
// only binaries the operator put in the plugin dir run.
func pluginCommand(pluginDir, command string) (string, error) {
	path := command
	if !filepath.IsAbs(path) {
		path = filepath.Join(pluginDir, path)
	}
	path = filepath.Clean(path)
	outside := fmt.Errorf("%s is outside the plugin dir %s; third-party plugins must live there", path, pluginDir)
	if rel, err := filepath.Rel(pluginDir, path); err != nil || !filepath.IsLocal(rel) {
		return path, outside
	}
	realDir, err := filepath.EvalSymlinks(pluginDir)
	if err != nil {
		return path, nil // no plugin dir: starting the plugin reports the missing binary
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return path, nil // no binary: starting the plugin reports it
	}
	if rel, err := filepath.Rel(realDir, real); err != nil || !filepath.IsLocal(rel) {
		return path, fmt.Errorf("%s is a link to %s, outside the plugin dir %s; third-party plugins must live there", path, real, pluginDir)
	}
	return path, nil
}
