// Package web holds the console's pages: the HTML, CSS and JavaScript that
// `quire serve` sends under /ui/, embedded in the binary so the console
// needs no build step and loads nothing from the network.
//
// The scripts are plain JavaScript modules written by hand (no framework,
// no bundler): what is here is what the browser runs. The server sends a
// strict Content-Security-Policy (default-src 'self'), so nothing here is
// inline: no <script> without src, no style attributes, no event handler
// attributes; web_test.go checks it.
package web

import (
	"embed"
	"io/fs"
)

//go:embed index.html app.css favicon.svg js
var assets embed.FS

// FS is the console's files, index.html at the root.
func FS() fs.FS { return assets }
