package prompt

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/quirehq/quire/workspace"
)

// maxCachedPlans bounds the per-workspace plan cache.
const maxCachedPlans = 4096

// planKey identifies everything a context plan depends on: the files a
// request sees follow from these, and the workspace is immutable.
type planKey struct {
	agent   *Agent
	user    string
	session Session
	mode    Mode
	channel Channel
	room    string
	day     string // agent-local date, "" for none
	// window and share are the request's context window and share (zero:
	// the agent's own budget), the small inputs of budgetOf: the key is
	// hashed on every request.
	window int
	share  float64
}

// budgetOf is the budget a plan of key charges: the agent's, or scaled
// to the request's context window (Assemble has checked the window).
func (key planKey) budgetOf() Budget {
	b := key.agent.Config.Budget
	if key.window == 0 && key.share == 0 {
		return b
	}
	scaled, err := b.ScaleToWindow(key.window, key.share)
	if err != nil {
		return b
	}
	return scaled
}

// plan is the budgeted context files of one planKey: rendered once, then
// reused by every request with the same key.
type plan struct {
	// files are the injected context files in prompt order; contextBytes
	// and contextCont are the bytes and UTF-8 continuation bytes of their
	// rendered <context_file> blocks.
	files        []planFile
	contextBytes int
	contextCont  int
	bootstrap    bool    // BOOTSTRAP.md is injected
	report       Report  // request-independent parts filled in
	sources      []*File // the candidates' files (nil: missing), for sharing

	// renders remembers the last few results rendered from this plan, by
	// renderKey: a chat back-end asks for the same prompt many times. The
	// first is kept in first (most plans, one per user, see only one
	// request shape), the others in renders.
	mu       sync.Mutex
	first    Result
	firstKey uint64
	hasFirst bool
	renders  map[uint64]Result

	// reasons remembers skillsDecision.reason's text: requests with the
	// same skills ask for it again and again.
	reasons map[skillsDecision]string

	// templates is shared by the plans of users who see the same files
	// (forUser): their prompts differ only in the user id, so a prompt
	// rendered for one is the others' with the id swapped.
	templates *templates
}

// skillsReason is d.reason(), remembered.
func (p *plan) skillsReason(d skillsDecision) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.reasons[d]; ok {
		return r
	}
	if p.reasons == nil || len(p.reasons) >= maxRendersPerPlan {
		p.reasons = make(map[skillsDecision]string, 2)
	}
	r := d.reason()
	p.reasons[d] = r
	return r
}

// templates remembers rendered prompts by renderKey, split around the
// user id.
type templates struct {
	mu sync.Mutex
	m  map[uint64]template
}

// template is a rendered result whose prompt is prefix + user id + suffix.
type template struct {
	prefix, suffix string
	chars          int // code points of prefix and suffix
	res            Result
}

// keepTemplate remembers res, rendered for user with the id at userAt.
func (p *plan) keepTemplate(key uint64, user string, userAt int, res Result) {
	if p.templates == nil || userAt < 0 || user == "" {
		return
	}
	uc, _ := countChars(user)
	t := template{prefix: res.Prompt[:userAt], suffix: res.Prompt[userAt+len(user):], chars: res.Report.PromptChars - uc, res: res}
	t.res.Prompt = ""
	p.templates.mu.Lock()
	defer p.templates.mu.Unlock()
	if p.templates.m == nil || len(p.templates.m) >= maxRendersPerPlan {
		p.templates.m = make(map[uint64]template, maxRendersPerPlan)
	}
	p.templates.m[key] = t
}

// fromTemplate builds the result for user from a remembered template.
func (p *plan) fromTemplate(key uint64, user string) (Result, bool) {
	if p.templates == nil || user == "" {
		return Result{}, false
	}
	p.templates.mu.Lock()
	t, ok := p.templates.m[key]
	p.templates.mu.Unlock()
	if !ok {
		return Result{}, false
	}
	res := t.res
	res.Report.User = user
	res.Report.PromptTokens = 0 // the caller counts them if asked
	var b strings.Builder
	b.Grow(len(t.prefix) + len(user) + len(t.suffix))
	b.WriteString(t.prefix)
	b.WriteString(user)
	b.WriteString(t.suffix)
	res.Prompt = b.String()
	uc, _ := countChars(user)
	res.Report.PromptBytes = len(res.Prompt)
	res.Report.PromptChars = t.chars + uc
	return res, true
}

// planFile is one injected context file: its name and what of it is
// injected, with the UTF-8 continuation bytes in that.
type planFile struct {
	name string
	body excerpt
	cont int
}

// contextBlockBytes is what <context_file name=""> … </context_file> adds.
const contextBlockBytes = len("<context_file name=\"\">\n\n</context_file>\n")

// maxRendersPerPlan bounds the results a plan remembers.
const maxRendersPerPlan = 16

func (p *plan) rendered(key uint64) (Result, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hasFirst && p.firstKey == key {
		return p.first, true
	}
	r, ok := p.renders[key]
	return r, ok
}

func (p *plan) remember(key uint64, r Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.hasFirst || p.firstKey == key {
		p.first, p.firstKey, p.hasFirst = r, key, true
		return
	}
	if p.renders == nil || len(p.renders) >= maxRendersPerPlan {
		p.renders = make(map[uint64]Result, maxRendersPerPlan)
	}
	p.renders[key] = r
}

// contextPlan returns the plan for key, computing it on first use.
func (w *Workspace) contextPlan(key planKey, day time.Time) (*plan, error) {
	w.mu.Lock()
	p, ok := w.plans[key]
	w.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := w.buildPlan(key, day)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	if len(w.plans) >= maxCachedPlans {
		clear(w.plans)
	}
	w.plans[key] = p
	w.mu.Unlock()
	return p, nil
}

// resolved is a candidate after the per-user merge.
type resolved struct {
	candidate
	file *File
}

// resolve finds the file candidate c resolves to for user, whose
// directory is userDir ("" without a user); userFiles is false when that
// directory does not exist, so none of the user's files is looked for.
func (w *Workspace) resolve(a *Agent, c candidate, user, userDir string, userFiles bool) (*File, error) {
	if c.root {
		return w.file(a, c.rel, c.name, "")
	}
	names := [2]string{c.rel}
	n := 1
	if c.rel == workspace.MemoryFile {
		names[1], n = workspace.MemoryFallbackFile, 2
	}
	for _, rel := range names[:n] {
		if c.perUser && userDir != "" && userFiles {
			f, err := w.file(a, joinPath(userDir, rel), c.name, user)
			if err != nil || f != nil {
				return f, err
			}
		}
		if c.perUser && userDir != "" && !userFiles {
			if f := w.seedFile(a, rel); f != nil {
				return f, nil
			}
		}
		if c.perUser && c.userOnly && userDir != "" {
			continue
		}
		f, err := w.file(a, joinPath(a.Dir, rel), c.name, "")
		if err != nil || f != nil {
			return f, err
		}
	}
	return nil, nil
}

// buildPlan resolves and budgets the context files of one
// agent, user, session and day (behavior.md §3–§4), or reuses the plan of
// a user who sees the same files.
func (w *Workspace) buildPlan(key planKey, day time.Time) (*plan, error) {
	files, err := w.resolveFiles(key, day)
	if err != nil {
		return nil, err
	}
	// Users without files of their own see the same files: they share
	// the budgeting, and only the report's user differs.
	skey := w.sharedKey(key, files)
	w.mu.Lock()
	sp := w.shared[skey]
	w.mu.Unlock()
	if sp != nil && sp.sameSources(files) {
		return sp.forUser(key), nil
	}
	b := key.budgetOf()
	rep, bodies := w.budget(key, b, files)
	p := w.newPlan(rep, files, bodies, &b)
	seedReport(&p.report, p.sources, key)
	w.mu.Lock()
	if len(w.shared) >= maxCachedPlans {
		clear(w.shared)
	}
	w.shared[skey] = p
	w.mu.Unlock()
	return p, nil
}

// resolveFiles finds the file of each context file a session of key on
// day may inject: the user's own or the agent's (nil when there is none).
func (w *Workspace) resolveFiles(key planKey, day time.Time) ([]resolved, error) {
	a := key.agent
	userDir, userFiles := "", false
	if key.user != "" {
		var err error
		if userDir, err = a.UserDir(key.user); err != nil {
			return nil, err
		}
		// A new user has no directory: their files are not looked for
		// one by one.
		userFiles = !w.dir(userDir).absent
	}
	cands := candidates(&a.Config, key.mode, key.channel, key.room, key.user != "", day)
	cands = append(cands, w.sharedCandidates(key)...)
	files := make([]resolved, len(cands))
	for i, c := range cands {
		f, err := w.resolve(a, c, key.user, userDir, userFiles)
		if err != nil {
			return nil, err
		}
		files[i] = resolved{candidate: c, file: f}
	}
	return files, nil
}

// injected is what one file injects: its excerpt, its length in chars
// and the limit it was cut to.
type injected struct {
	body         excerpt
	chars, limit int
	tokens       int // counted while budgeting in tokens, else 0
}

// budget charges files against the agent's budgets in charge order and
// returns the report and what each file injects, by index into files; b
// is key's budget (budgetOf).
func (w *Workspace) budget(key planKey, b Budget, files []resolved) (Report, []injected) {
	cfg := &key.agent.Config
	rep := Report{
		Agent: key.agent.Name, User: key.user, Session: key.session, Channel: key.channel, Room: key.room,
		AgentType: cfg.Type, Policy: cfg.Policy, Budget: b, Tokenizer: w.cache.Encoding(),
		Files: make([]FileReport, len(files)),
	}
	bodies := make([]injected, len(files))
	remaining := b.Total()
	var used []string // files that have taken from the total, in charge order
	for n, i := range chargeOrder(files, cfg.Order) {
		r := files[i]
		fr := &rep.Files[i]
		fr.Name, fr.Order, fr.RemainingBeforeChars = r.name, n+1, remaining
		in, ok := w.budgetFile(&rep, fr, r, cfg, &b, remaining, used)
		if !ok {
			continue
		}
		remaining -= in.size(b.Unit)
		rep.InjectedChars += fr.InjectedChars
		bodies[i] = in
		used = append(used, r.name)
	}
	rep.RemainingChars = remaining
	if b.Unit == UnitTokens {
		rep.RemainingChars, rep.RemainingTokens = 0, remaining
	}
	return rep, bodies
}

// budgetFile budgets one file with remaining chars of the total left,
// filling in its report fr (and rep's problems); ok is false when it
// injects nothing.
func (w *Workspace) budgetFile(rep *Report, fr *FileReport, r resolved, cfg *Config, b *Budget, remaining int, used []string) (in injected, ok bool) {
	if b.Unit == UnitTokens {
		return w.budgetFileTokens(rep, fr, r, cfg, b, remaining, used)
	}
	t, ok := w.admitFile(rep, fr, r, cfg, b, remaining, used)
	if !ok {
		return in, false
	}
	limit := b.PerFileChars
	body, tr := truncateText(t, r.name, limit, b.HeadRatio, b.TailRatio)
	fr.Status = StatusFull
	if tr.Truncated {
		fr.Status = StatusTruncated
	}
	if tr.ResultChars > remaining {
		limit = remaining
		body, tr = truncateText(t, r.name, limit, b.HeadRatio, b.TailRatio)
		fr.Status, fr.UsedBy = StatusClamped, append([]string(nil), used...)
	}
	fr.LimitChars = limit
	switch {
	case tr.Dropped:
		fr.Status = StatusDropped
		fr.Dropped = []Range{fullRange(t)}
		fr.Note = fmt.Sprintf("dropped: the %s chars left of the total budget cannot hold a truncation marker", GroupThousands(remaining))
		return in, false
	case fr.Status == StatusTruncated:
		fr.Note = keptNote("truncated to the per-file budget of ", limit, " chars: kept ", -1, tr.HeadChars, tr.TailChars, t.chars)
	case fr.Status == StatusClamped:
		fr.Note = keptNote("clamped to the ", limit, " chars left of the total budget of ", b.TotalChars, tr.HeadChars, tr.TailChars, t.chars)
	}
	if tr.Truncated {
		fr.HeadChars, fr.TailChars = tr.HeadChars, tr.TailChars
		start := t.position(tr.HeadEnd)
		fr.Dropped = []Range{{Start: start, End: t.positionAfter(start, tr.TailStart)}}
	}
	fr.InjectedChars = tr.ResultChars
	return injected{body: body, chars: tr.ResultChars, limit: limit}, true
}

// admitFile is the first steps of budgeting a file, in either unit:
// its report's sizes, then whether it injects anything at all (missing,
// only white space, or dropped for the total's minimum; a reject policy
// reports a file over the per-file budget). ok is false when it injects
// nothing; t is its text.
func (w *Workspace) admitFile(rep *Report, fr *FileReport, r resolved, cfg *Config, b *Budget, remaining int, used []string) (t *text, ok bool) {
	if r.file == nil {
		fr.Status, fr.Note = StatusMissing, "no such file"
		return nil, false
	}
	t = r.file.text
	fr.Path, fr.User = r.file.Path, r.file.User
	fr.OriginalBytes, fr.OriginalChars, fr.InvalidBytes = t.fileBytes, t.chars, t.invalid
	// A budget in tokens is enforced on exact counts, even where reports
	// estimate them.
	if t.sampled || (w.estimate && b.Unit != UnitTokens) {
		fr.OriginalTokens, fr.OriginalTokensEstimated = (t.chars+3)/4, true
	} else {
		fr.OriginalTokens = w.exactTokens(r.file)
	}
	if isBlank(t) {
		fr.Status, fr.Note = StatusEmpty, "only white space"
		return t, false
	}
	size, unit := t.chars, b.UnitName()
	if b.Unit == UnitTokens {
		size = fr.OriginalTokens
	}
	if per := b.PerFile(); size > per && cfg.Policy == PolicyReject {
		fr.OverBudget = true
		rep.Problems = append(rep.Problems, workspace.Problem{Path: r.file.Path, Severity: workspace.SeverityError, Code: "budget-reject",
			Message: fmt.Sprintf("%s is %s %s; the per-file budget is %s and this agent's policy is reject: shorten it by %s %s",
				r.name, GroupThousands(size), unit, GroupThousands(per), GroupThousands(size-per), unit)})
	}
	if remaining < b.MinFile() {
		fr.Status, fr.UsedBy = StatusDropped, append([]string(nil), used...)
		fr.Dropped = []Range{fullRange(t)}
		fr.Note = fmt.Sprintf("dropped: only %s %s of the total budget of %s were left (less than the minimum of %s)",
			GroupThousands(remaining), unit, GroupThousands(b.Total()), GroupThousands(b.MinFile()))
		return t, false
	}
	return t, true
}

// newPlan makes the plan of files as budgeted (bodies) under b: the
// injected files in order, their sizes and their token counts.
func (w *Workspace) newPlan(rep Report, files []resolved, bodies []injected, b *Budget) *plan {
	p := &plan{report: rep, sources: make([]*File, len(files)), templates: &templates{}}
	injectedFiles := 0
	for i, r := range files {
		p.sources[i] = r.file
		if bodies[i].body.Len() != 0 {
			injectedFiles++
		}
	}
	p.files = make([]planFile, 0, injectedFiles)
	for i, in := range bodies {
		body := in.body
		if body.Len() == 0 {
			continue
		}
		f := planFile{name: files[i].name, body: body, cont: body.Len() - in.chars}
		p.files = append(p.files, f)
		p.contextBytes += body.Len() + len(f.name) + contextBlockBytes
		p.contextCont += f.cont
		if f.name == workspace.BootstrapFile {
			p.bootstrap = true
		}
		fr := &p.report.Files[i]
		fr.InjectedTokens = in.tokens
		if in.tokens == 0 {
			fr.InjectedTokens = w.injectedTokens(fr, files[i].file, f.name, in, b)
		}
		p.report.InjectedTokens += fr.InjectedTokens
	}
	return p
}

// injectedTokens counts the tokens of what file injects (in): the
// original's count when it was not cut.
func (w *Workspace) injectedTokens(fr *FileReport, file *File, name string, in injected, b *Budget) int {
	switch {
	case in.body.marker == "":
		return fr.OriginalTokens
	case w.estimate:
		return (in.chars + 3) / 4
	}
	return w.excerptTokens(file, name, in.limit, b, in.body)
}

// keptNote writes a truncated or clamped file's note, its numbers grouped
// in thousands, in one allocation: what + limit + mid, then total (when
// not -1) + ": kept ", then head + " + " + tail + " of " + chars.
func keptNote(what string, limit int, mid string, total, head, tail, chars int) string {
	var buf [160]byte
	b := append(buf[:0], what...)
	b = appendGrouped(b, limit)
	b = append(b, mid...)
	if total != -1 {
		b = appendGrouped(b, total)
		b = append(b, ": kept "...)
	}
	b = appendGrouped(b, head)
	b = append(b, " + "...)
	b = appendGrouped(b, tail)
	b = append(b, " of "...)
	b = appendGrouped(b, chars)
	return string(b)
}

// sharedKey fingerprints what a plan depends on besides the user: the
// agent, session, channel, room and day, whether there is a user, and which
// file each candidate resolved to.
func (w *Workspace) sharedKey(key planKey, files []resolved) uint64 {
	var h maphash.Hash
	h.SetSeed(w.seed)
	for _, s := range []string{key.agent.Dir, string(key.session), string(key.mode), string(key.channel), key.room, key.day} {
		h.WriteString(s)
		h.WriteByte(0)
	}
	if key.window != 0 || key.share != 0 {
		var buf [16]byte
		binary.LittleEndian.PutUint64(buf[:8], uint64(key.window))
		binary.LittleEndian.PutUint64(buf[8:], math.Float64bits(key.share))
		h.Write(buf[:])
	}
	if key.user != "" {
		h.WriteByte(1)
	}
	for _, r := range files {
		h.WriteByte(0xff)
		if r.file != nil {
			h.WriteString(r.file.Path)
		}
	}
	return h.Sum64()
}

// sameSources reports whether files resolved to exactly p's files.
func (p *plan) sameSources(files []resolved) bool {
	if len(files) != len(p.sources) {
		return false
	}
	for i, r := range files {
		if r.file != p.sources[i] {
			return false
		}
	}
	return true
}

// forUser returns p for the user of key, who sees the same files.
func (p *plan) forUser(key planKey) *plan {
	q := &plan{files: p.files, contextBytes: p.contextBytes, contextCont: p.contextCont, bootstrap: p.bootstrap, report: p.report, sources: p.sources, templates: p.templates}
	q.report.User = key.user
	seedReport(&q.report, q.sources, key)
	return q
}

// seedReport names the user's own paths in rep's seed files (see
// userSeedReport), copying rep's file reports first when it has any.
func seedReport(rep *Report, sources []*File, key planKey) {
	for _, f := range sources {
		if f == nil || !f.seed {
			continue
		}
		userDir, err := key.agent.UserDir(key.user)
		if err != nil {
			return
		}
		rep.Files = append([]FileReport(nil), rep.Files...)
		userSeedReport(rep, sources, key.user, userDir)
		return
	}
}

// excerptKey identifies what truncating file f (shown as name) to limit
// with b's ratios keeps, without hashing the excerpt itself.
func (w *Workspace) excerptKey(f *File, name string, limit int, b *Budget) uint64 {
	var h maphash.Hash
	h.SetSeed(w.seed)
	var n [32]byte
	binary.LittleEndian.PutUint64(n[0:], f.key)
	binary.LittleEndian.PutUint64(n[8:], uint64(limit))
	binary.LittleEndian.PutUint64(n[16:], math.Float64bits(b.HeadRatio))
	binary.LittleEndian.PutUint64(n[24:], math.Float64bits(b.TailRatio))
	h.Write(n[:])
	h.WriteString(name)
	return h.Sum64()
}

// chargeOrder returns indexes into files in the order they are charged
// against the total budget: the names of agent.yaml's order first, then the
// rest in prompt order.
func chargeOrder(files []resolved, order []string) []int {
	idx := make([]int, 0, len(files))
	taken := make([]bool, len(files))
	for _, name := range order {
		for i, f := range files {
			if !taken[i] && f.name == name {
				idx, taken[i] = append(idx, i), true
			}
		}
	}
	for i := range files {
		if !taken[i] {
			idx = append(idx, i)
		}
	}
	return idx
}

func isBlank(t *text) bool {
	return strings.TrimSpace(t.head) == "" && (!t.sampled || strings.TrimSpace(t.tail) == "")
}

func fullRange(t *text) Range {
	return Range{Start: Position{Offset: 0, Line: 1, Column: 1}, End: t.position(t.size)}
}

// positionAfter is position(off) for an off at or after from's offset,
// counting lines from there rather than from the start of the file.
func (t *text) positionAfter(from Position, off int64) Position {
	if t.sampled || off < from.Offset || off > int64(len(t.head)) || from.Line == 0 {
		return t.position(off)
	}
	between := t.head[from.Offset:off]
	nl := strings.Count(between, "\n")
	if nl == 0 {
		n, _ := countChars(between)
		return Position{Offset: off, Line: from.Line, Column: from.Column + n}
	}
	lineStart := strings.LastIndexByte(between, '\n') + 1
	n, _ := countChars(between[lineStart:])
	return Position{Offset: off, Line: from.Line + nl, Column: n + 1}
}

// position converts a byte offset of the decoded file into a Position.
func (t *text) position(off int64) Position {
	s, base, lineBase := t.head, int64(0), 0
	if t.sampled && off > int64(len(t.head)) {
		s, base, lineBase = t.tail, t.size-int64(len(t.tail)), t.lines-t.tailLines
	}
	rel := int(off - base)
	if rel < 0 || rel > len(s) { // unreachable for offsets truncation produces
		return Position{Offset: off}
	}
	before := s[:rel]
	line := lineBase + 1 + strings.Count(before, "\n")
	lineStart := strings.LastIndexByte(before, '\n') + 1
	col := 0
	if lineStart > 0 || base == 0 {
		n, _ := countChars(before[lineStart:])
		col = n + 1
	}
	return Position{Offset: off, Line: line, Column: col}
}
