// Package template holds the skeleton of a Grove plugin that
// `grove plugin init NAME` writes out (cli/plugininit.go): a module of its
// own, its main, a profile or a policy, the SDK's conformance test for it,
// a GNUmakefile and a release configuration.
//
// The files are text/template files with [[ ]] delimiters (the release
// configuration uses goreleaser's own {{ }}), named with a .tmpl suffix so
// that Go never builds them as part of Grove: files/ is written for either
// kind, files/profile/ or files/policy/ for the kind asked for.
package template

import "embed"

// FS is the template: files/, files/profile/ and files/policy/. The all:
// prefix keeps .goreleaser.yaml.tmpl and .gitignore.tmpl, whose names
// start with a dot.
//
//go:embed all:files
var FS embed.FS
