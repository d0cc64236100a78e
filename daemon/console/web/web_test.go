package web_test

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon/console/web"
)

// readAll returns every file of the console by path.
func readAll(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := fs.WalkDir(web.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(web.FS(), p)
		files[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatalf("walking the console's files: %v", err)
	}
	return files
}

func TestIndexAtRoot(t *testing.T) {
	files := readAll(t)
	index, ok := files["index.html"]
	if !ok {
		t.Fatal("index.html is not at the root of web.FS()")
	}
	// Every /ui/ URL index.html loads is a file of the FS.
	for _, m := range regexp.MustCompile(`(?:src|href)="/ui/([^"]+)"`).FindAllStringSubmatch(index, -1) {
		if _, ok := files[m[1]]; !ok {
			t.Errorf("index.html loads /ui/%s, which is not embedded", m[1])
		}
	}
}

// The server's CSP is default-src 'self': nothing inline may be needed.
func TestNothingInline(t *testing.T) {
	checks := []struct {
		ext, what string
		re        *regexp.Regexp
	}{
		{".html", "an inline script", regexp.MustCompile(`<script(?:\s[^>]*)?>`)},
		{".html", "a style attribute", regexp.MustCompile(`\sstyle=`)},
		{".html", "an event handler attribute", regexp.MustCompile(`\son[a-z]+=`)},
		{".html", "a <style> element", regexp.MustCompile(`<style`)},
		{".js", "HTML parsed from a string", regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write`)},
		{".js", "a style attribute", regexp.MustCompile(`setAttribute\(\s*['"]style`)},
		{".js", "eval", regexp.MustCompile(`\beval\(|new Function\(`)},
	}
	for p, text := range readAll(t) {
		for _, c := range checks {
			if path.Ext(p) != c.ext {
				continue
			}
			for _, m := range c.re.FindAllString(text, -1) {
				if c.what == "an inline script" && strings.Contains(m, "src=") {
					continue
				}
				t.Errorf("%s has %s (%q): the CSP refuses it", p, c.what, m)
			}
		}
	}
}

// The console works offline: nothing is loaded from another host.
func TestNoRemoteURL(t *testing.T) {
	re := regexp.MustCompile(`(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}/`)
	for p, text := range readAll(t) {
		if path.Ext(p) == ".svg" {
			continue // xmlns names, not loads
		}
		for _, m := range re.FindAllString(text, -1) {
			t.Errorf("%s names a remote URL %q: the console must work offline", p, m)
		}
	}
}

// Every module a script imports is embedded.
func TestImportsResolve(t *testing.T) {
	files := readAll(t)
	re := regexp.MustCompile(`(?m)^(?:import|export)\s[^'"]*?from\s+'([^']+)'`)
	n := 0
	for p, text := range files {
		if path.Ext(p) != ".js" {
			continue
		}
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			n++
			target := path.Join(path.Dir(p), m[1])
			if !strings.HasPrefix(m[1], ".") {
				t.Errorf("%s imports %q: only relative imports of embedded modules work", p, m[1])
			} else if _, ok := files[target]; !ok {
				t.Errorf("%s imports %q (%s), which is not embedded", p, m[1], target)
			}
		}
	}
	if n == 0 {
		t.Error("found no import at all: the pattern is wrong")
	}
}
