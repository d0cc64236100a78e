// Package web holds the console's pages (HTML, CSS and JavaScript),
// embedded: nothing is built or fetched at run time.
package web

import (
	"embed"
	"io/fs"
)

//go:embed index.html
var files embed.FS

// FS returns the console's files, index.html at its root.
func FS() fs.FS { return files }
