// Package ui is Grove's web console: plain HTML, CSS and JavaScript
// modules embedded in the binary and served by the agent at /ui/. There is
// no build step (nothing to install, nothing generated to keep in sync);
// the browser loads the modules as they are written. The console reads and
// acts only through the agent's API, from the same origin.
package ui

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var files embed.FS

// CSP is the console's Content-Security-Policy: its own scripts, styles and
// images only, calls to its own origin only, no inline code, no frames. The
// console makes no request anywhere else (no CDN fonts or icons).
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the console under /ui/.
func Handler() http.Handler {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.StripPrefix("/ui/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		// The files change with the binary; a browser must not keep an
		// old module beside a new one.
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
