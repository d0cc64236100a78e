package lsp

import (
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
)

// watcher reports changes made to the workspace on disk outside the editor
// (git checkout, another tool, Neovim, which offers no file watching on
// Linux). fsnotify is not recursive, so every directory is added, and new
// directories as they appear.
type watcher struct {
	w    *fsnotify.Watcher
	done chan struct{}
}

// skipDir reports directories that never hold workspace files.
func skipDir(name string) bool {
	return name == ".git" || name == "node_modules"
}

// startWatcher watches root and calls changed after every event.
func startWatcher(root string, log *slog.Logger, changed func()) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watcher{w: fw, done: make(chan struct{})}
	addTree(fw, root, log)
	go func() {
		defer close(w.done)
		for {
			select {
			case ev, ok := <-fw.Events:
				if !ok {
					return
				}
				if ev.Has(fsnotify.Create) {
					if st, err := os.Stat(ev.Name); err == nil && st.IsDir() && !skipDir(filepath.Base(ev.Name)) {
						addTree(fw, ev.Name, log)
					}
				}
				if strings.Contains(filepath.ToSlash(ev.Name), "/.git/") {
					continue
				}
				changed()
			case err, ok := <-fw.Errors:
				if !ok {
					return
				}
				log.Warn("watch workspace", "err", err)
			}
		}
	}()
	return w, nil
}

// addTree adds dir and every directory below it to the watcher.
func addTree(fw *fsnotify.Watcher, dir string, log *slog.Logger) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if p != dir && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		if err := fw.Add(p); err != nil {
			log.Warn("watch directory", "dir", p, "err", err)
		}
		return nil
	})
}

// close stops watching and waits for the event loop to end.
func (w *watcher) close() {
	w.w.Close()
	<-w.done
}
