package prompt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"strings"
	"time"
	"unsafe"

	"github.com/quirehq/quire/workspace"
)

// Tool is a tool the caller's model can call, as the Tooling section lists it.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// VirtualFile is context the caller supplies that is not a file in the
// workspace (DELEGATION.md, TEAM.md, AVAILABILITY.md, …). It is rendered in
// <system_context>, is not charged to the file budget, and is left out
// while BOOTSTRAP.md is present.
type VirtualFile struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// Request is everything a system prompt depends on besides the workspace.
type Request struct {
	// Agent names the agent; "" selects the only agent of the workspace.
	Agent string
	// User is the opaque id of the user; "" for none (agent-level files).
	User string
	// Session is main (the default), subagent or cron.
	Session Session
	// Channel is dm (the default) or group.
	Channel Channel
	// Mode is full, task, minimal or none; "" is the session's default
	// (Session.DefaultMode).
	Mode Mode
	// Room names the room of a group channel (rooms/<room>.md).
	Room string
	// Tools the model can call.
	Tools []Tool
	// Skills the request may see, already filtered by the skills package.
	Skills []Skill
	// Extra is caller-supplied context, rendered in <extra_context>.
	Extra string
	// VirtualFiles are rendered after the context files.
	VirtualFiles []VirtualFile
	// Now is the current time. The zero time leaves out the Current Time
	// section and the daily logs, keeping the prompt free of the clock.
	Now time.Time
	// ShowTime adds the time of day to the date.
	ShowTime bool
	// Sandbox, when set, describes the sandbox the model runs in.
	Sandbox string
	// CanSpawn adds the Sub-Agent Spawning section.
	CanSpawn bool
	// Model names the model, for the Runtime section.
	Model string
	// CountPromptTokens makes the report include the exact token count of
	// the whole prompt (costly: the prompt is tokenised every time).
	CountPromptTokens bool
	// ContextWindow, when set, is the model's context window in tokens:
	// the total budget becomes ContextShare of it (0: agent.yaml's
	// budget.context_share, else 0.25), in tokens (Budget.ScaleToWindow).
	ContextWindow int
	ContextShare  float64
}

// Result is an assembled system prompt and its report.
type Result struct {
	Prompt string `json:"prompt"`
	Report Report `json:"report"`
}

// ErrBadRequest wraps every error Assemble returns for a malformed request.
var ErrBadRequest = errors.New("bad request")

// Assemble builds the system prompt for req (behavior.md §4). The same
// workspace and request always give the same bytes. The first request for
// a user, session and day reads and budgets the files; later ones reuse
// that work and only render the sections.
func (w *Workspace) Assemble(req Request) (Result, error) {
	explicitMode := req.Mode != ""
	a, p, local, err := w.planFor(&req)
	if err != nil {
		return Result{}, err
	}
	res, err := w.assemblePlan(p, a, &req, local)
	if explicitMode {
		res.Report.Mode = req.Mode
	}
	return res, err
}

// AssembleReport is the report Assemble gives for req, without rendering
// the prompt: it reads and budgets the files the same way (the one plan
// both share), so every file's figures, the budget and the problems are
// Assemble's. What only rendering computes is left zero: the prompt's
// size (PromptBytes, PromptChars, PromptTokens, StablePrefixBytes), the
// Skills section (SkillsMode, SkillCount, SkillsReason) and Virtual.
func (w *Workspace) AssembleReport(req Request) (Report, error) {
	explicitMode := req.Mode != ""
	_, p, _, err := w.planFor(&req)
	if err != nil {
		return Report{}, err
	}
	rep := p.report
	rep.ContextWindow = req.ContextWindow
	if explicitMode {
		rep.Mode = req.Mode
	}
	return rep, nil
}

// planFor checks req, fills in its defaults (session, channel, mode) and
// returns its agent, its plan and its time in the agent's time zone.
func (w *Workspace) planFor(req *Request) (a *Agent, p *plan, local time.Time, err error) {
	a, err = w.Agent(req.Agent)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	if err := normalize(req); err != nil {
		return nil, nil, time.Time{}, err
	}
	var day string
	if !req.Now.IsZero() {
		local = req.Now.In(a.Config.Location)
		var buf [10]byte
		day = string(local.AppendFormat(buf[:0], time.DateOnly))
	}
	key := planKey{agent: a, user: req.User, session: req.Session, mode: req.Mode, channel: req.Channel, room: req.Room, day: day}
	if req.ContextWindow != 0 || req.ContextShare != 0 {
		if _, err := a.Config.Budget.ScaleToWindow(req.ContextWindow, req.ContextShare); err != nil {
			return nil, nil, time.Time{}, fmt.Errorf("%w: %w", ErrBadRequest, err)
		}
		key.window, key.share = req.ContextWindow, req.ContextShare
	}
	var dayStart time.Time
	if !local.IsZero() {
		dayStart = time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, local.Location())
	}
	p, err = w.contextPlan(key, dayStart)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	return a, p, local, nil
}

// normalize fills in req's default session, channel and mode and checks
// its names.
func normalize(req *Request) error {
	if req.Session == "" {
		req.Session = SessionMain
	}
	if req.Channel == "" {
		req.Channel = ChannelDM
	}
	if !req.Session.valid() {
		return fmt.Errorf("%w: session %q is unknown; use main, subagent or cron", ErrBadRequest, req.Session)
	}
	if req.Mode == "" {
		req.Mode = req.Session.DefaultMode()
	}
	if !req.Mode.valid() {
		return fmt.Errorf("%w: mode %q is unknown; use full, task, minimal or none", ErrBadRequest, req.Mode)
	}
	if !req.Channel.valid() {
		return fmt.Errorf("%w: channel %q is unknown; use dm or group", ErrBadRequest, req.Channel)
	}
	if req.User != "" {
		if _, err := workspace.EncodeID(req.User); err != nil {
			return fmt.Errorf("%w: user: %w", ErrBadRequest, err)
		}
	}
	if req.Room != "" {
		if _, err := workspace.EncodeID(req.Room); err != nil {
			return fmt.Errorf("%w: room: %w", ErrBadRequest, err)
		}
		if req.Channel != ChannelGroup {
			return fmt.Errorf("%w: room %q needs the group channel", ErrBadRequest, req.Room)
		}
	}
	return nil
}

// assemblePlan renders req from its plan p, or reuses a rendering.
func (w *Workspace) assemblePlan(p *plan, a *Agent, req *Request, local time.Time) (Result, error) {
	rkey := w.renderKey(req, local)
	if res, ok := p.rendered(rkey); ok {
		if req.CountPromptTokens && res.Report.PromptTokens == 0 {
			res.Report.PromptTokens = w.cache.Count(res.Prompt)
			p.remember(rkey, res)
		}
		if !req.CountPromptTokens {
			res.Report.PromptTokens = 0
		}
		res.Report.ContextWindow = req.ContextWindow
		return res, nil
	}
	res, ok := p.fromTemplate(rkey, req.User)
	if !ok {
		var userAt int
		res = Result{Report: p.report}
		// The derived virtual files depend on the agent and the mode, which
		// the plan is of: merged only here, they are not hashed per request.
		full := *req
		full.VirtualFiles = w.virtualFiles(a, req)
		res.Prompt, userAt = render(&res.Report, a, p, &full, local)
		p.keepTemplate(rkey, req.User, userAt, res)
	}
	if req.CountPromptTokens {
		res.Report.PromptTokens = w.cache.Count(res.Prompt)
	}
	p.remember(rkey, res)
	res.Report.ContextWindow = req.ContextWindow
	return res, nil
}

// renderKey fingerprints everything render reads from req besides the
// plan (the caller's virtual files; the derived ones are the plan's): a
// request that matches a remembered one gets the same bytes back without
// rendering them again.
func (w *Workspace) renderKey(req *Request, local time.Time) uint64 {
	// First the shape of the request: how many tools, skills and virtual
	// files, every string's length (as varints) and the flags; then the
	// strings one after the other. The shape says where each string
	// ends, so the bytes hashed stand for one request only, with one
	// write per string.
	var shapeBuf [256]byte
	shape := shapeBuf[:0]
	n := func(x int) { shape = binary.AppendUvarint(shape, uint64(x)) }
	n(len(req.Tools))
	for _, t := range req.Tools {
		n(len(t.Name))
		n(len(t.Description))
	}
	n(len(req.Skills))
	for _, s := range req.Skills {
		n(len(s.Name))
		n(len(s.Description))
		n(len(s.Location))
		if s.Builtin {
			shape = append(shape, 1)
		} else {
			shape = append(shape, 0)
		}
	}
	n(len(req.VirtualFiles))
	for _, v := range req.VirtualFiles {
		n(len(v.Name))
		n(len(v.Content))
	}
	n(len(req.Extra))
	n(len(req.Sandbox))
	n(len(req.Model))
	var flags byte
	if req.ShowTime {
		flags |= 1
		shape = append(shape, byte(local.Hour()), byte(local.Minute()))
	}
	if req.CanSpawn {
		flags |= 2
	}
	shape = append(shape, flags)

	var h maphash.Hash
	h.SetSeed(w.seed)
	h.Write(shape)
	for _, t := range req.Tools {
		h.WriteString(t.Name)
		h.WriteString(t.Description)
	}
	for _, s := range req.Skills {
		h.WriteString(s.Name)
		h.WriteString(s.Description)
		h.WriteString(s.Location)
	}
	for _, v := range req.VirtualFiles {
		h.WriteString(v.Name)
		h.WriteString(v.Content)
	}
	h.WriteString(req.Extra)
	h.WriteString(req.Sandbox)
	h.WriteString(req.Model)
	return h.Sum64()
}

// sectionBytes bounds the fixed texts of all sections plus the identity,
// user, date and runtime lines; the Grow estimate only has to be close.
const sectionBytes = 4096

func toolBytes(ts []Tool) int {
	n := 0
	for _, t := range ts {
		n += len(t.Name) + len(t.Description) + 4
	}
	return n
}

func skillBytes(ss []Skill) int {
	n := 0
	for _, s := range ss {
		n += len(s.Name) + len(s.Description) + len(s.Location) + 96
	}
	return n
}

func virtualBytes(vs []VirtualFile) int {
	n := 0
	for _, v := range vs {
		n += len(v.Name) + len(v.Content) + 48
	}
	return n
}

// oneLine flattens line breaks so caller-supplied text cannot start a new
// section of the prompt.
func oneLine(s string) string {
	if strings.IndexByte(s, '\n') < 0 && strings.IndexByte(s, '\r') < 0 {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// needsEscape reports whether s has a character XML escapes.
func needsEscape(s string) bool {
	if len(s) > 256 { // long: five vectorised byte searches win
		return strings.IndexByte(s, '&') >= 0 || strings.IndexByte(s, '<') >= 0 || strings.IndexByte(s, '>') >= 0 ||
			strings.IndexByte(s, '"') >= 0 || strings.IndexByte(s, '\'') >= 0
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 64 && xmlSpecial>>c&1 != 0 {
			return true
		}
	}
	return false
}

// escScan returns the UTF-8 continuation bytes of s and whether s has a
// character XML escapes, eight bytes at a time.
func escScan(s string) (cont int, special bool) {
	var hit uint64 // high bit set in a byte that is one of & < > " '
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		b = b[8:]
		if w&hiBits != 0 {
			cont += bits.OnesCount64(contBits(w))
		}
		// & (0x26) and ' (0x27) are the bytes that become 0x27 with bit 0
		// set, < (0x3c) and > (0x3e) those that become 0x3e with bit 1 set.
		hit |= zeroByte(w|loBits^(loBits*'\'')) | zeroByte(w|(loBits*2)^(loBits*'>')) | zeroByte(w^(loBits*'"'))
	}
	for _, c := range b {
		if c < 64 && xmlSpecial>>c&1 != 0 {
			special = true
		} else if c&0xC0 == 0x80 {
			cont++
		}
	}
	return cont, special || hit != 0
}

// zeroByte is non-zero exactly when some byte of w is zero.
func zeroByte(w uint64) uint64 { return (w - loBits) & ^w & hiBits }

// xmlSpecial has bit c set for each character c that XML escapes.
const xmlSpecial uint64 = 1<<'&' | 1<<'<' | 1<<'>' | 1<<'"' | 1<<'\''

// promptWriter builds the prompt and counts its code points as it goes:
// PromptChars is the byte length minus the UTF-8 continuation bytes, and
// only text that may hold them is scanned.
type promptWriter struct {
	strings.Builder
	cont int // continuation bytes written
}

// lit writes ASCII text (the section texts).
func (w *promptWriter) lit(s string) { w.WriteString(s) }

// pre writes text whose continuation bytes are already counted.
func (w *promptWriter) pre(s string, cont int) {
	w.WriteString(s)
	w.cont += cont
}

// str writes caller-supplied text.
func (w *promptWriter) str(s string) {
	w.WriteString(s)
	n, _ := countChars(s)
	w.cont += len(s) - n
}

func (w *promptWriter) bytes(b []byte) { w.Write(b) }

// esc writes s with XML's special characters escaped.
func (w *promptWriter) esc(s string) {
	var special bool
	if len(s) <= 256 { // names, descriptions: one pass for both questions
		var cont int
		cont, special = escScan(s)
		w.cont += cont
	} else {
		n, _ := countChars(s)
		w.cont += len(s) - n
		special = needsEscape(s)
	}
	if !special {
		w.WriteString(s)
		return
	}
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '"':
			esc = "&quot;"
		case '\'':
			esc = "&apos;"
		default:
			continue
		}
		w.WriteString(s[last:i])
		w.WriteString(esc)
		last = i + 1
	}
	w.WriteString(s[last:])
}
