package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/workspace"
)

// fileClass says what the daemon may do with a path written through the API.
type fileClass int

const (
	classRefused fileClass = iota
	classWritable
	classPersona
)

// ETag returns the entity tag of content: its memory hash, quoted.
func ETag(content []byte) string { return `"` + memory.Hash(content) + `"` }

// cleanPath checks a file path of the API: printable (no control
// character: the path goes into the commit message and the tree),
// relative, slash-separated, without . or .. elements. A path that tries
// to escape is a 400.
func cleanPath(p string) (string, error) {
	if err := workspace.CheckLine("path", p); err != nil {
		return "", api.Errorf(api.CodeBadPath, "%v", err)
	}
	if p == "" || strings.Contains(p, `\`) || !fs.ValidPath(p) || p == "." {
		return "", api.Errorf(api.CodeBadPath, "path %q is not a clean relative path inside the agent workspace", p)
	}
	for _, el := range strings.Split(p, "/") {
		if strings.EqualFold(el, ".git") {
			return "", api.Errorf(api.CodeBadPath, "path %q reaches into .git", p)
		}
	}
	return p, nil
}

// classify says what a write may do to rel (relative to the agent's or
// the user's directory) by its kind (workspace.KindOf): memory is
// written, a persona file (workspace.PersonaFiles) may only change
// through a proposal branch.
func classify(rel string, perUser bool) (fileClass, string) {
	if _, _, ok := workspace.SplitUser(rel); ok {
		return classRefused, fmt.Sprintf("%s: a user's files are written with ?user=ID, not by their users/ path", rel)
	}
	switch workspace.KindOf(rel) {
	case workspace.KindMemory:
		return classWritable, ""
	case workspace.KindDailyLog:
		return classRefused, fmt.Sprintf("%s is a daily log, and daily logs are append-only: add an entry with POST /v1/agents/{agent}/memory/append (MCP: memory_append); nothing was written", rel)
	case workspace.KindPerUser:
		if perUser {
			return classWritable, ""
		}
		return classRefused, fmt.Sprintf("%s is written per user: pass ?user=ID", rel)
	case workspace.KindPersona:
		return classPersona, ""
	}
	return classRefused, fmt.Sprintf("%s is outside the write allow list (memory files, and a user's USER.md and BOOTSTRAP.md; persona files become proposals)", rel)
}

// scope returns the directory of the request's files relative to the
// agent directory: "" for agent-level files, users/<dir> for a user's. A
// user id that cannot name a directory (or holds a control character,
// which would reach the commit's Quire-User trailer) is a 400.
func scope(user string) (string, error) {
	if user == "" {
		return "", nil
	}
	enc, err := workspace.EncodeID(user)
	var te *workspace.TextError
	if errors.As(err, &te) {
		return "", api.Errorf(api.CodeBadUser, "user: %v", te)
	}
	if err != nil {
		return "", api.Errorf(api.CodeBadUser, "user %q cannot name a directory: %v", user, err)
	}
	return workspace.UsersDir + "/" + enc, nil
}

func joinSlash(elems ...string) string {
	var kept []string
	for _, e := range elems {
		if e != "" && e != "." {
			kept = append(kept, e)
		}
	}
	return path.Join(kept...)
}

// ifMatches applies If-Match: "*" creates a file and never replaces one;
// otherwise one of the listed ETags must be the file's.
func ifMatches(ifMatch string, cur []byte, exists bool) bool {
	if ifMatch == "*" {
		return !exists
	}
	if !exists {
		return false
	}
	// If-Match compares strongly (RFC 9110 §13.1.1): a weak tag (W/"…")
	// never matches.
	want := ETag(cur)
	for _, t := range strings.Split(ifMatch, ",") {
		t = strings.TrimSpace(t)
		if strings.HasPrefix(t, "W/") {
			continue
		}
		if t == want || `"`+t+`"` == want {
			return true
		}
	}
	return false
}

// pathConflict turns a write through a file (memory/<day>.md/x.md) or
// over a directory into a 409; nothing was written.
func pathConflict(err error) error {
	var pc *gitsync.PathConflictError
	if errors.As(err, &pc) {
		return api.Errorf(api.CodePathConflict, "%v; nothing was written", pc)
	}
	return err
}

// dailyLogPath is memory/YYYY-MM-DD.md of now's date in loc.
func dailyLogPath(now time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	return workspace.DailyLog(now.In(loc))
}

// The years a caller-chosen time may put a daily log in.
const (
	minLogYear = 1970
	maxLogYear = 9999
)

// entryHeading is the heading line of a daily log entry.
var entryHeading = regexp.MustCompile(`^##[ \t]+[0-9]{1,2}:[0-9]{2}\b`)

// entryHeadingLine returns the 1-based number of the first line of text
// that reads as an entry heading ("## 14:05"), or 0: appended text must not
// forge entries of its own.
func entryHeadingLine(text string) int {
	for i, line := range strings.Split(text, "\n") {
		if entryHeading.MatchString(strings.TrimRight(line, "\r")) {
			return i + 1
		}
	}
	return 0
}

// appendEntry adds a "## HH:MM" entry to a daily log: the heading, the
// room and user it was written in (the design's "**Room:** / **User:**"
// lines, each only when known), then the text.
func appendEntry(cur []byte, now time.Time, room, user, text string) []byte {
	var b bytes.Buffer
	if len(bytes.TrimSpace(cur)) == 0 {
		fmt.Fprintf(&b, "# %s\n", now.Format("2006-01-02"))
	} else {
		b.Write(bytes.TrimRight(cur, " \t\r\n"))
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\n## %s\n\n", now.Format("15:04"))
	if room != "" {
		fmt.Fprintf(&b, "**Room:** %s\n", room)
	}
	if user != "" {
		fmt.Fprintf(&b, "**User:** %s\n", user)
	}
	if room != "" || user != "" {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%s\n", strings.TrimSpace(text))
	return b.Bytes()
}

// buildFunc computes the writes of one commit from the tree it goes on;
// no writes means nothing to commit.
type buildFunc func(fsys fs.FS) ([]gitsync.FileWrite, error)

func author(agent string, now time.Time) object.Signature {
	return object.Signature{Name: agent, Email: agent + "@quire.invalid", When: now}
}
