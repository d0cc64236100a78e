package gitsync

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

func pkts(lines ...string) string {
	var b []byte
	for _, l := range lines {
		if l == "" {
			b = append(b, "0000"...)
			continue
		}
		b = appendPkt(b, l)
	}
	return string(b)
}

var (
	h1 = strings.Repeat("1", 40)
	h2 = strings.Repeat("2", 40)
	h0 = strings.Repeat("0", 40)
)

func TestParseCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     string // fmt of commands, or "error"
		caps     string
	}{
		{"probe", "0000", "[]", ""},
		{"empty body", "", "[]", ""},
		{"one update with caps", pkts(h1+" "+h2+" refs/heads/main\x00report-status side-band-64k atomic\n", ""), "[{" + h1 + " " + h2 + " refs/heads/main}]", "atomic report-status side-band-64k"},
		{"create and delete", pkts(h0+" "+h2+" refs/heads/a\x00report-status", h1+" "+h0+" refs/heads/b\n", ""), "[{" + h0 + " " + h2 + " refs/heads/a} {" + h1 + " " + h0 + " refs/heads/b}]", "report-status"},
		{"no flush", pkts(h1 + " " + h2 + " refs/heads/main\n"), "error", ""},
		{"bad hash", pkts("xyz "+h2+" refs/heads/main\n", ""), "error", ""},
		{"upper-case hash", pkts(strings.ToUpper("a"+h1[1:])+" "+h2+" refs/heads/main\n", ""), "error", ""},
		{"two zero ids", pkts(h0+" "+h0+" refs/heads/main\n", ""), "error", ""},
		{"ref outside refs/", pkts(h1+" "+h2+" HEAD\n", ""), "error", ""},
		{"ref with ..", pkts(h1+" "+h2+" refs/heads/a..b\n", ""), "error", ""},
		{"ref ending in .lock", pkts(h1+" "+h2+" refs/heads/a.lock\n", ""), "error", ""},
		{"shallow", pkts("shallow "+h1+"\n", ""), "error", ""},
		{"bad pkt length", "zzzz", "error", ""},
		{"truncated pkt", "0040abc", "error", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmds, caps, err := parseCommands(strings.NewReader(tt.in))
			if tt.want == "error" {
				if err == nil {
					t.Fatalf("parsed %v, want an error", cmds)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(cmds); got != tt.want && !(tt.want == "[]" && len(cmds) == 0) {
				t.Errorf("commands = %s, want %s", got, tt.want)
			}
			var names []string
			for k := range caps {
				names = append(names, k)
			}
			if got := strings.Join(sorted(names), " "); got != tt.caps {
				t.Errorf("caps = %q, want %q", got, tt.caps)
			}
		})
	}
}

func sorted(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

func TestParseUploadRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     string
	}{
		{"clone", pkts("want "+h1+" multi_ack_detailed side-band-64k ofs-delta\n", "want "+h2+"\n", "", "done\n"), "wants=2 haves=0 done=true caps=3"},
		{"negotiation round", pkts("want "+h1+" side-band-64k\n", "", "have "+h2+"\n", "have "+h1+"\n", ""), "wants=1 haves=2 done=false caps=1"},
		{"round then done", pkts("want "+h1+"\n", "", "have "+h2+"\n", "done\n"), "wants=1 haves=1 done=true caps=0"},
		{"bad want", pkts("want nothex\n", ""), "error"},
		{"deepen", pkts("want "+h1+"\n", "deepen 1\n", ""), "error"},
		{"junk", pkts("hello\n"), "error"},
		{"want after haves", pkts("want "+h1+"\n", "", "want "+h2+"\n"), "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parseUploadRequest(strings.NewReader(tt.in))
			if tt.want == "error" {
				if err == nil {
					t.Fatalf("parsed %+v, want an error", r)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("wants=%d haves=%d done=%v caps=%d", len(r.Wants), len(r.Haves), r.Done, len(r.Caps))
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func FuzzParseCommands(f *testing.F) {
	f.Add([]byte("0000"))
	f.Add([]byte(pkts(h1+" "+h2+" refs/heads/main\x00report-status side-band-64k\n", "")))
	f.Add([]byte(pkts(h0+" "+h2+" refs/heads/a\n", h1+" "+h0+" refs/tags/v1\n", "") + "PACK"))
	f.Fuzz(func(t *testing.T, in []byte) {
		cmds, _, err := parseCommands(bytes.NewReader(in))
		if err != nil {
			return
		}
		// What parses re-encodes to something that parses the same.
		var lines []string
		for _, c := range cmds {
			if !validRefName(c.Name) || (c.Old.IsZero() && c.New.IsZero()) {
				t.Fatalf("accepted invalid command %+v", c)
			}
			lines = append(lines, c.Old.String()+" "+c.New.String()+" "+c.Name.String()+"\n")
		}
		if len(lines) == 0 {
			return
		}
		again, _, err := parseCommands(strings.NewReader(pkts(append(lines, "")...)))
		if err != nil || fmt.Sprint(again) != fmt.Sprint(cmds) {
			t.Fatalf("re-parse: %v, %v; want %v", again, err, cmds)
		}
	})
}

func FuzzParseUploadRequest(f *testing.F) {
	f.Add([]byte(pkts("want "+h1+" multi_ack_detailed side-band-64k\n", "", "have "+h2+"\n", "done\n")))
	f.Add([]byte("0000"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := parseUploadRequest(bytes.NewReader(in))
		if err != nil {
			return
		}
		for _, h := range append(r.Wants, r.Haves...) {
			if _, ok := parseHash(h.String()); !ok {
				t.Fatalf("accepted bad hash %s", h)
			}
		}
	})
}

// TestReceiveProtocol talks to the endpoint directly: the probe, a stale
// deletion refused by compare-and-swap, a push with a corrupt pack.
func TestReceiveProtocol(t *testing.T) {
	t.Parallel()
	h, url, dir := testHost(t, HostOptions{})
	if _, err := h.Create("ws"); err != nil {
		t.Fatal(err)
	}
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n"})
	git(t, src, "push", "-q", url+"/ws.git", "main")
	head := git(t, src, "rev-parse", "HEAD")
	post := func(body string) string {
		t.Helper()
		resp, err := http.Post(url+"/ws.git/git-receive-pack", "application/x-git-receive-pack-request", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		return string(b)
	}
	tests := []struct {
		name, body, want string
	}{
		{"probe", "0000", ""},
		{"stale delete", pkts(h1+" "+h0+" refs/heads/main\x00report-status", ""), pkts("unpack ok\n", "ng refs/heads/main non-fast-forward\n", "")},
		{"corrupt pack", pkts(head+" "+h2+" refs/heads/main\x00report-status", "") + "PACKgarbage", "ng refs/heads/main unpacker error"},
		{"missing objects", pkts(head+" "+h2+" refs/heads/main\x00report-status", "") + emptyPack(), pkts("unpack ok\n", "ng refs/heads/main missing necessary objects\n", "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := post(tt.body)
			if !strings.Contains(got, tt.want) || (tt.want == "" && got != "") {
				t.Errorf("response %q, want %q", got, tt.want)
			}
			if cur := git(t, filepath.Join(dir, "ws.git"), "rev-parse", "main"); cur != head {
				t.Errorf("main moved to %s", cur)
			}
		})
	}
	// Unknown repositories and dumb HTTP.
	for _, u := range []string{"/nope.git/info/refs?service=git-upload-pack", "/ws.git/info/refs", "/../x.git/info/refs?service=git-upload-pack"} {
		resp, err := http.Get(url + u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Errorf("GET %s answered 200", u)
		}
	}
}

// emptyPack is a valid pack with no objects.
func emptyPack() string {
	var b bytes.Buffer
	b.WriteString("PACK\x00\x00\x00\x02\x00\x00\x00\x00")
	h := sha1Sum(b.Bytes())
	b.Write(h)
	return b.String()
}

func sha1Sum(b []byte) []byte {
	s := sha1.Sum(b)
	return s[:]
}
