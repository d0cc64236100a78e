package lsp

import (
	"net/url"
	"path"
	"runtime"
	"strings"

	"go.lsp.dev/uri"
)

// The one place file: URIs and local paths are converted, for this
// system (filePath, fileURI) and, for the tests on any system, for either
// kind of path (uriToPath, pathToURI with windows set or not). On Windows
// a client may send the drive letter in either case and its colon
// percent-encoded (VS Code sends file:///c%3A/Users/…), and some send
// backslashes: all of them name one path, with an upper-case drive
// letter, so the documents a client opens and the files on disk meet. A
// file on another host is a UNC path (\\host\share\…) on Windows and not
// on this disk elsewhere.

// onWindows is whether this system's paths are Windows paths.
const onWindows = runtime.GOOS == "windows"

// filePath is the local path of a file: URI, with or without the host
// "localhost" (file://localhost/home/… is file:///home/…). Other schemes,
// and files on other hosts (but Windows shares), are not on this disk.
func filePath(u uri.URI) (string, bool) { return uriToPath(string(u), onWindows) }

// fileURI is the file: URI of the local path p.
func fileURI(p string) uri.URI { return pathToURI(p, onWindows) }

// uriToPath is filePath for a system with Windows paths (windows) or
// slash paths.
func uriToPath(u string, windows bool) (string, bool) {
	parsed, err := url.Parse(strings.ReplaceAll(u, `\`, "/"))
	if err != nil || !strings.EqualFold(parsed.Scheme, "file") || parsed.Path == "" {
		return "", false
	}
	p := parsed.Path
	remote := parsed.Host != "" && !strings.EqualFold(parsed.Host, "localhost")
	if !windows {
		if remote {
			return "", false
		}
		return path.Clean(p), true
	}
	if remote { // a share: file://server/share/dir is \\server\share\dir
		if strings.Trim(p, "/") == "" {
			return "", false
		}
		return `\\` + parsed.Host + backslashes(path.Clean(p)), true
	}
	if len(p) >= 3 && p[0] == '/' && isDriveLetter(p[1]) && p[2] == ':' {
		p = p[1:] // /C:/Users/… is C:/Users/…
	}
	if len(p) >= 2 && isDriveLetter(p[0]) && p[1] == ':' {
		p = strings.ToUpper(p[:1]) + ":" + path.Clean("/"+p[2:])
	} else {
		p = path.Clean(p)
	}
	return backslashes(p), true
}

// pathToURI is fileURI for a system with Windows paths (windows) or
// slash paths. p is absolute.
func pathToURI(p string, windows bool) uri.URI {
	if !windows {
		return uri.URI((&url.URL{Scheme: "file", Path: p}).String())
	}
	s := strings.ReplaceAll(p, `\`, "/")
	if host, rest, ok := strings.Cut(strings.TrimPrefix(s, "//"), "/"); ok && strings.HasPrefix(s, "//") {
		return uri.URI((&url.URL{Scheme: "file", Host: host, Path: "/" + rest}).String())
	}
	if len(s) >= 2 && isDriveLetter(s[0]) && s[1] == ':' {
		s = "/" + strings.ToUpper(s[:1]) + s[1:]
	}
	return uri.URI((&url.URL{Scheme: "file", Path: s}).String())
}

func isDriveLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func backslashes(p string) string { return strings.ReplaceAll(p, "/", `\`) }
