// Package recall measures memory search on long real conversations: it
// reads the LoCoMo dev set (../shared/bench/locomo-dev beside the project;
// evaluation data under a non-commercial licence, read in place and never
// copied), turns each conversation into an agent's daily logs exactly as
// the set's build_ws.py does (one memory/YYYY-MM-DD.md per session date
// under a "# YYYY-MM-DD (Weekday)" heading, one "## HH:MM" entry per turn),
// and scores recall@k: the share of questions of categories 1-4 with an
// evidence turn inside a returned hit. The benchmark in this package runs
// it against both stores and every offline embedder, with the same
// chunking and ranking code as the daemon.
package recall

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/workspace"
)

// Categories names the question categories of the set.
var Categories = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

// Place is where a dialog turn lies: its daily log and line.
type Place struct {
	Path string
	Line int
}

// Question is one question with its evidence turns.
type Question struct {
	Agent    string
	Category int
	Text     string
	Evidence []Place
}

// Conversation is one agent's memory built from a conversation.
type Conversation struct {
	Agent     string
	Documents []memory.Document
	Questions []Question
}

type turn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
	Caption string `json:"blip_caption"`
}

type qa struct {
	Question string `json:"question"`
	Evidence []any  `json:"evidence"`
	Category int    `json:"category"`
}

var (
	sessionKey  = regexp.MustCompile(`^session_(\d+)$`)
	evidenceID  = regexp.MustCompile(`^D:?(\d+):(\d+)$`)
	evidenceSep = regexp.MustCompile(`[;,\s]+`)
)

// Load reads every conversation file (*.json) in dir/data.
func Load(dir string) ([]Conversation, error) {
	files, err := filepath.Glob(filepath.Join(dir, "data", "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no conversations in %s/data", dir)
	}
	sort.Slice(files, func(i, j int) bool { return num(files[i]) < num(files[j]) })
	var out []Conversation
	for _, f := range files {
		c, err := loadConversation(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func num(path string) int {
	n, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(path), ".json"))
	return n
}

type session struct {
	n     int
	when  time.Time
	turns []turn
}

func loadConversation(file string) (Conversation, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return Conversation{}, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Conversation{}, err
	}
	conv := Conversation{Agent: "locomo-" + strings.TrimSuffix(filepath.Base(file), ".json")}
	sessions, err := parseSessions(raw)
	if err != nil {
		return conv, err
	}
	var places map[string]Place
	conv.Documents, places = dailyLogs(sessions)
	var qas []qa
	if err := json.Unmarshal(raw["qa"], &qas); err != nil {
		return conv, fmt.Errorf("qa: %w", err)
	}
	for _, q := range qas {
		if q.Category < 1 || q.Category > 4 {
			continue
		}
		if ev := evidence(q, places); len(ev) > 0 {
			conv.Questions = append(conv.Questions, Question{Agent: conv.Agent, Category: q.Category, Text: q.Question, Evidence: ev})
		}
	}
	return conv, nil
}

// parseSessions returns the conversation's non-empty sessions in order.
func parseSessions(raw map[string]json.RawMessage) ([]session, error) {
	var sessions []session
	for k, v := range raw {
		m := sessionKey.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		var turns []turn
		if err := json.Unmarshal(v, &turns); err != nil || len(turns) == 0 {
			continue
		}
		var when string
		if err := json.Unmarshal(raw[k+"_date_time"], &when); err != nil {
			return nil, fmt.Errorf("%s_date_time: %w", k, err)
		}
		t, err := time.Parse("3:04 pm on 2 January, 2006", strings.ToLower(when))
		if err != nil {
			return nil, fmt.Errorf("%s_date_time: %w", k, err)
		}
		n, _ := strconv.Atoi(m[1])
		sessions = append(sessions, session{n, t, turns})
	}
	sort.Slice(sessions, func(i, j int) bool { return sessions[i].n < sessions[j].n })
	return sessions, nil
}

// dailyLogs writes the sessions as daily logs, one `## HH:MM` entry per
// turn, and returns them by path with the place of every turn by its id.
func dailyLogs(sessions []session) ([]memory.Document, map[string]Place) {
	logs := map[string][]string{}
	var days []string
	logPath := map[string]string{} // day → its daily log
	places := map[string]Place{}
	for _, s := range sessions {
		day := s.when.Format(time.DateOnly)
		lines, ok := logs[day]
		if !ok {
			days = append(days, day)
			logPath[day] = workspace.DailyLog(s.when)
			lines = []string{fmt.Sprintf("# %s (%s)", day, s.when.Format("Monday"))}
		}
		for i, t := range s.turns {
			at := s.when.Add(time.Duration(i) * time.Minute)
			if at.Format("2006-01-02") != day {
				at = time.Date(s.when.Year(), s.when.Month(), s.when.Day(), 23, 59, 0, 0, time.UTC)
			}
			lines = append(lines, "", "## "+at.Format("15:04"), t.Speaker+": "+turnText(t))
			places[t.DiaID] = Place{logPath[day], len(lines)}
		}
		logs[day] = lines
	}
	var docs []memory.Document
	for _, day := range days {
		docs = append(docs, memory.NewDocument(logPath[day], "", strings.Join(logs[day], "\n")+"\n"))
	}
	sort.Slice(docs, func(i, j int) bool { return docs[i].Path < docs[j].Path })
	return docs, places
}

// turnText is a turn's text on one line, with the caption of an image
// it shares.
func turnText(t turn) string {
	text := strings.TrimSpace(strings.Join(strings.Split(t.Text, "\n"), " "))
	if c := strings.TrimSpace(t.Caption); c != "" {
		text += " [shared an image: " + c + "]"
	}
	return text
}

// evidence returns the places of the turns q cites, each once, in order.
func evidence(q qa, places map[string]Place) []Place {
	var ev []Place
	seen := map[Place]bool{}
	for _, item := range q.Evidence {
		for _, tok := range evidenceSep.Split(fmt.Sprint(item), -1) {
			m := evidenceID.FindStringSubmatch(tok)
			if m == nil {
				continue
			}
			a, _ := strconv.Atoi(m[1])
			b, _ := strconv.Atoi(m[2])
			p, ok := places[fmt.Sprintf("D%d:%d", a, b)]
			if ok && !seen[p] {
				seen[p] = true
				ev = append(ev, p)
			}
		}
	}
	return ev
}

// Found reports whether one of q's evidence turns lies inside a hit.
func Found(q Question, hits []memory.Hit) bool {
	for _, e := range q.Evidence {
		for _, h := range hits {
			if h.User == "" && h.Path == e.Path && h.StartLine <= e.Line && e.Line <= h.EndLine {
				return true
			}
		}
	}
	return false
}

// FoundAround is Found counting the hits' context too: whether an
// evidence turn lies inside a hit or in the text returned around it.
// Recall@k is Found; this says what context adds to what a reader sees.
func FoundAround(q Question, hits []memory.Hit) bool {
	if Found(q, hits) {
		return true
	}
	for _, e := range q.Evidence {
		for _, h := range hits {
			for _, c := range h.Context {
				if h.User == "" && h.Path == e.Path && c.StartLine <= e.Line && e.Line <= c.EndLine {
					return true
				}
			}
		}
	}
	return false
}

// Score is recall by category name ("all" for every question).
type Score struct {
	Hit, N map[string]int
}

// Add counts one question.
func (s *Score) Add(category int, found bool) {
	if s.Hit == nil {
		s.Hit, s.N = map[string]int{}, map[string]int{}
	}
	for _, k := range []string{"all", Categories[category]} {
		s.N[k]++
		if found {
			s.Hit[k]++
		}
	}
}

// Recall returns the share found in category k.
func (s Score) Recall(k string) float64 {
	if s.N[k] == 0 {
		return 0
	}
	return float64(s.Hit[k]) / float64(s.N[k])
}

// String renders "all 0.768 (n); multi-hop …".
func (s Score) String() string {
	keys := []string{"all", "multi-hop", "temporal", "open-domain", "single-hop"}
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.3f", k, s.Recall(k)))
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" (%d questions)", s.N["all"])
}

// Run indexes every conversation into store (as one agent each) and asks
// every question with limit k. It returns the score (Found: evidence in
// a hit, never in its context) and each question's hits, in order.
func Run(ctx context.Context, store memory.Store, convs []Conversation, k int, opts memory.Query) (Score, [][]memory.Hit, error) {
	for _, c := range convs {
		if _, err := store.Index(ctx, c.Agent, "dev", c.Documents); err != nil {
			return Score{}, nil, err
		}
	}
	var s Score
	var all [][]memory.Hit
	for _, c := range convs {
		for _, q := range c.Questions {
			query := opts
			query.Text, query.Limit = q.Text, k
			hits, err := store.Search(ctx, c.Agent, query)
			if err != nil {
				return s, nil, err
			}
			s.Add(q.Category, Found(q, hits))
			all = append(all, hits)
		}
	}
	return s, all, nil
}
