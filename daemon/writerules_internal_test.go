package daemon

import (
	"strings"
	"testing"
	"time"
)

func TestCleanPath(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"MEMORY.md", true}, {"memory/2026-11-22.md", true}, {"memory/deep/x.md", true},
		{"", false}, {".", false}, {"..", false}, {"../x", false}, {"memory/../../x", false},
		{"/etc/passwd", false}, {"memory//x.md", false}, {"memory/./x.md", false},
		{`memory\..\x`, false}, {"memory/.git/config", false}, {".git/HEAD", false}, {"a\x00b", false},
	}
	for _, tt := range tests {
		_, err := cleanPath(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("cleanPath(%q) error %v, want ok %v", tt.in, err, tt.ok)
		}
	}
}

func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"MEMORY.md", "../x", "memory/a.md", "a/../b", `a\b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := cleanPath(p)
		if err != nil {
			return
		}
		for _, el := range strings.Split(got, "/") {
			if el == ".." || el == "." || el == "" || el == ".git" {
				t.Fatalf("cleanPath(%q) accepted element %q", p, el)
			}
		}
		if strings.HasPrefix(got, "/") || strings.Contains(got, `\`) {
			t.Fatalf("cleanPath(%q) = %q", p, got)
		}
	})
}

func TestClassify(t *testing.T) {
	tests := []struct {
		path    string
		perUser bool
		want    fileClass
	}{
		{"MEMORY.md", false, classWritable}, {"memory.md", true, classWritable},
		{"memory/2026-11-22.md", false, classRefused}, {"memory/x.txt", false, classRefused},
		{"USER.md", true, classWritable}, {"USER.md", false, classRefused},
		{"BOOTSTRAP.md", true, classWritable}, {"BOOTSTRAP.md", false, classRefused},
		{"SOUL.md", false, classPersona}, {"AGENTS.md", true, classPersona},
		{"IDENTITY.md", false, classPersona}, {"TOOLS.md", false, classPersona},
		{"HEARTBEAT.md", false, classRefused}, {"agent.yaml", false, classRefused},
		{"skills/x/SKILL.md", false, classRefused},
	}
	for _, tt := range tests {
		if got, _ := classify(tt.path, tt.perUser); got != tt.want {
			t.Errorf("classify(%q, %v) = %v, want %v", tt.path, tt.perUser, got, tt.want)
		}
	}
}

func TestAppendEntry(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 5, 0, 0, time.UTC)
	tests := []struct{ cur, room, user, text, want string }{
		{"", "", "", "First.", "# 2026-11-22\n\n## 09:05\n\nFirst.\n"},
		{"# 2026-11-22\n\n## 08:00\n\nEarlier.\n\n\n", "", "", "  Second.\n", "# 2026-11-22\n\n## 08:00\n\nEarlier.\n\n## 09:05\n\nSecond.\n"},
		{"no newline at end", "", "", "x", "no newline at end\n\n## 09:05\n\nx\n"},
		{"", "#dev", "alice", "Chose JWT.", "# 2026-11-22\n\n## 09:05\n\n**Room:** #dev\n**User:** alice\n\nChose JWT.\n"},
		{"", "", "alice", "x", "# 2026-11-22\n\n## 09:05\n\n**User:** alice\n\nx\n"},
	}
	for _, tt := range tests {
		if got := string(appendEntry([]byte(tt.cur), now, tt.room, tt.user, tt.text)); got != tt.want {
			t.Errorf("appendEntry(%q, %q) = %q, want %q", tt.cur, tt.text, got, tt.want)
		}
	}
}

func TestDailyLogPath(t *testing.T) {
	lisbon, _ := time.LoadLocation("Europe/Lisbon")
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	now := time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC)
	if got := dailyLogPath(now, lisbon); got != "memory/2026-11-22.md" {
		t.Errorf("Lisbon: %s", got)
	}
	if got := dailyLogPath(now, tokyo); got != "memory/2026-11-23.md" {
		t.Errorf("Tokyo: %s", got)
	}
	if got := dailyLogPath(now, nil); got != "memory/2026-11-22.md" {
		t.Errorf("UTC: %s", got)
	}
}

func TestIfMatches(t *testing.T) {
	cur := []byte("hello")
	tag := ETag(cur)
	tests := []struct {
		ifMatch string
		exists  bool
		want    bool
	}{
		{"*", false, true}, {"*", true, false}, {tag, true, true}, {"W/" + tag, true, false},
		{`"x", ` + tag, true, true}, {strings.Trim(tag, `"`), true, true},
		{`"stale"`, true, false}, {tag, false, false},
	}
	for _, tt := range tests {
		if got := ifMatches(tt.ifMatch, cur, tt.exists); got != tt.want {
			t.Errorf("ifMatches(%q, exists %v) = %v, want %v", tt.ifMatch, tt.exists, got, tt.want)
		}
	}
}
