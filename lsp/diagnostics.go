package lsp

import (
	"context"
	"io/fs"
	"path/filepath"
	"reflect"
	"sort"
	"time"
	"unicode/utf8"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
	"github.com/quirehq/quire/workspace"
)

// diagnosticSource names Quire in every diagnostic it publishes.
const diagnosticSource = "quire"

// diagnoseLoop recomputes diagnostics once the workspace has been quiet for
// the debounce interval after a change, and publishes those that changed.
// It runs for the life of the connection.
func (s *server) diagnoseLoop(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.dirty:
			timer.Reset(s.debounce)
		case <-timer.C:
			s.publishDiagnostics(ctx, s.diagnose(s.currentView()))
		}
	}
}

// publishDiagnostics sends the diagnostics of every URI whose set changed
// since it was last published. A URI that had diagnostics and has none now
// gets an empty list (never null), once.
func (s *server) publishDiagnostics(ctx context.Context, next map[uri.URI][]protocol.Diagnostic) {
	type update struct {
		uri   uri.URI
		diags []protocol.Diagnostic
	}
	var updates []update
	s.mu.Lock()
	for u, diags := range next {
		if prev, ok := s.published[u]; ok && reflect.DeepEqual(prev, diags) {
			continue
		}
		if _, ok := s.published[u]; !ok && len(diags) == 0 {
			continue
		}
		s.published[u] = diags
		updates = append(updates, update{u, diags})
	}
	for u := range s.published {
		if _, ok := next[u]; !ok {
			delete(s.published, u)
			updates = append(updates, update{u, []protocol.Diagnostic{}})
		}
	}
	lensRefresh, hintRefresh := s.lensRefresh && len(updates) > 0, s.hintRefresh && len(updates) > 0
	s.mu.Unlock()
	sort.Slice(updates, func(i, j int) bool { return updates[i].uri < updates[j].uri })
	for _, up := range updates {
		if up.diags == nil {
			up.diags = []protocol.Diagnostic{}
		}
		err := s.client.PublishDiagnostics(ctx, &protocol.PublishDiagnosticsParams{URI: up.uri, Diagnostics: up.diags})
		if err != nil {
			s.log.Warn("publish diagnostics", "uri", up.uri, "err", err)
		}
	}
	// The budget couples the files: an edit to one changes the code lens
	// and inlay hints of the others, which clients only re-ask when told.
	if lensRefresh {
		if err := s.client.CodeLensRefresh(ctx); err != nil {
			s.log.Debug("code lens refresh", "err", err)
		}
	}
	if hintRefresh {
		if err := s.client.InlayHintRefresh(ctx); err != nil {
			s.log.Debug("inlay hint refresh", "err", err)
		}
	}
}

// diagnose computes the diagnostics of every open document in v. Every open
// document gets an entry (possibly empty) so that cleared problems are
// published as [].
func (s *server) diagnose(v view) map[uri.URI][]protocol.Diagnostic {
	out := make(map[uri.URI][]protocol.Diagnostic, len(v.docs))
	for u, doc := range v.docs {
		if doc.path == "" {
			continue // not in the workspace: nothing of Quire's applies
		}
		out[u] = []protocol.Diagnostic{}
	}
	byPath := map[string]uri.URI{}
	for u, doc := range v.docs {
		if doc.path == "" {
			continue
		}
		byPath[doc.path] = u
		out[u] = append(out[u], invalidUTF8(v.fsys.disk, doc.path, doc.text)...)
	}
	a := s.analyses.of(v.fsys)
	var checked []workspace.Problem
	if a.ws != nil {
		// The one validation (what `quire check` and a push run) on the
		// editor's view of the files.
		// The allow lists are checked against the skills the preview
		// loaded for this snapshot, not read from disk again per edit.
		checked = agent.Check(context.Background(), v.fsys, agent.CheckOptions{Workspace: a.ws, CheckAgent: s.checkAgent,
			SkillsOf: func(ag *prompt.Agent) *skills.Set { return a.skillsOf(ag, v.root, s.home, s.skillsDir) }})
	}
	for p, diags := range budgetDiagnostics(a, v, s.now(), checked) {
		u, ok := byPath[p]
		if !ok {
			u = fileURI(filepath.Join(v.root, filepath.FromSlash(p)))
		}
		out[u] = append(out[u], diags...)
	}
	for u := range out {
		sortDiagnostics(out[u])
	}
	return out
}

// invalidUTF8 reports a file whose bytes on disk are not UTF-8 (Quire
// refuses such context files). The JSON of the protocol cannot carry invalid
// bytes, so the editor's buffer holds U+FFFD where the file has them: each
// run of U+FFFD in the buffer is marked. A buffer not yet saved is checked
// as it will be written, which is always valid.
func invalidUTF8(fsys fs.FS, name, text string) []protocol.Diagnostic {
	disk, err := fs.ReadFile(fsys, name)
	if err != nil || utf8.Valid(disk) {
		return nil
	}
	m := newMapper(text)
	var out []protocol.Diagnostic
	add := func(start, end int) {
		out = append(out, protocol.Diagnostic{
			Range:    m.lspRange(start, end),
			Severity: protocol.DiagnosticSeverityError,
			Source:   protocol.NewOptional(diagnosticSource),
			Code:     protocol.String("invalid-utf8"),
			Message:  protocol.String(name + " is not valid UTF-8 on disk (shown as U+FFFD here); Quire refuses context files that are not UTF-8 text"),
		})
	}
	start := -1
	for i, r := range text {
		if r == utf8.RuneError {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			add(start, i)
			start = -1
		}
	}
	if start >= 0 {
		add(start, len(text))
	}
	if len(out) == 0 {
		add(0, 0) // the buffer no longer shows the bad bytes, but the file still has them
	}
	return out
}

// sortDiagnostics orders diagnostics by position so that equal sets compare
// equal.
func sortDiagnostics(diags []protocol.Diagnostic) {
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i].Range.Start, diags[j].Range.Start
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Character < b.Character
	})
}
